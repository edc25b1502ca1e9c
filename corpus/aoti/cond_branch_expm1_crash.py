"""Exported loudness gate whose culprit sits in a torch.cond branch: a crash.

The saved input is loud (its mean magnitude is above the threshold), so the true branch runs;
it computes expm1 of every other column, and the planted bug makes the C++ expm1 kernel (scalar
or vectorized) `throw 1` inside an OpenMP loop: the process dies (SIGABRT) when the loaded
package runs. The quiet branch (a scale) would have run fine.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("expm1", "runtime_error", paths=("cpp", "cppvec"))


class LoudnessGate(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(64, 4)

    def forward(self, x):
        h = torch.cond(x.abs().mean() > 0.1, lambda t: torch.expm1(t.abs().clamp(max=4.0)), lambda t: t * 0.5,
                       (x[..., ::2],))
        return self.fc(h)


def main():
    torch.manual_seed(0)
    x = torch.randn(16, 200, 128)
    ep = torch.export.export(LoudnessGate().eval(), (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print("out[0, 0]:", package(x)[0, 0])


if __name__ == "__main__":
    main()
