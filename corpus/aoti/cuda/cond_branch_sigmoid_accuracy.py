"""An exported CUDA gated block whose culprit sits in a torch.cond branch (a submodule of the graph).

The GPU form of corpus/aoti/cond_branch_sigmoid_accuracy.py: the branch taken computes sigmoid,
which the planted lowering bug negates (the lowering is shared by every backend, so the Triton
kernels of the package are wrong). Needs a CUDA GPU.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:sigmoid:accuracy:negate")


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(10, 10)

    def forward(self, x):
        h = self.fc(x)
        return torch.cond(h.sum() > -1e9, lambda t: torch.sigmoid(t) * t, lambda t: t.tanh(), (h,))


def main():
    torch.manual_seed(0)
    x = torch.randn(4, 10, device="cuda")
    ep = torch.export.export(Gated().cuda().eval(), (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print("out[0]:", package(x)[0])


if __name__ == "__main__":
    main()
