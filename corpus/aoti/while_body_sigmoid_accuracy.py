"""Exported iterative refiner whose culprit sits in the body of a torch.while_loop.

The loop runs three times; each pass computes sigmoid(y) * y, and the planted lowering bug
negates the sigmoid, so the package's outputs are wrong while the exported program run eagerly
is right.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:sigmoid:accuracy:negate")


class Refine(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 6)

    def forward(self, x):
        h = self.fc(x)
        i = torch.zeros((), dtype=torch.int64)
        _, y = torch.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, torch.sigmoid(y) * y), (i, h))
        return y


def main():
    torch.manual_seed(0)
    x = torch.randn(4, 6)
    ep = torch.export.export(Refine().eval(), (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print("y[0]:", package(x)[0])


if __name__ == "__main__":
    main()
