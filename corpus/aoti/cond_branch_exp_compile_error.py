"""Exported radial-basis gate whose culprit sits in the false branch of a torch.cond.

The saved input takes the false branch (its mean is far below the threshold), which computes
exp(-t * t); the planted bug makes Inductor's lowering of aten.exp raise, so
`aoti_compile_and_package` fails (it compiles both branches) while the exported program runs
fine eagerly.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:exp:compile_error")


class RadialGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        h = self.proj(x)
        return torch.cond(h.mean() > 1e6, lambda t: t.relu(), lambda t: torch.exp(-t * t), (h,))


def main():
    torch.manual_seed(0)
    x = torch.randn(5, 8)
    ep = torch.export.export(RadialGate().eval(), (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print("gate[0]:", package(x)[0])


if __name__ == "__main__":
    main()
