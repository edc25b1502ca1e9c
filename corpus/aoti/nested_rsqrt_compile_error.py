"""Exported residual stack with an RMS-norm submodule compiled with AOTInductor; Inductor's
lowering of aten.rsqrt (inside the `RMSNorm` submodule of each `Layer`) raises.

`aoti_compile_and_package` fails with a LoweringException, while the exported program runs
fine eagerly.
"""
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:rsqrt:compile_error")


class RMSNorm(nn.Module):
    def __init__(self, width, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))
        self.eps = eps

    def forward(self, x):
        return self.weight * x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)


class Layer(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = RMSNorm(width)
        self.mlp = nn.Sequential(nn.Linear(width, 2 * width), nn.ReLU(), nn.Linear(2 * width, width))

    def forward(self, x):
        return x + self.mlp(self.norm(x))


def main():
    torch.manual_seed(0)
    x = torch.randn(4, 7, 16)
    model = nn.Sequential(Layer(16), Layer(16)).eval()
    ep = torch.export.export(model, (x,))
    package = torch._inductor.aoti_load_package(torch._inductor.aoti_compile_and_package(ep))
    print("out[0, 0]:", package(x)[0, 0])


if __name__ == "__main__":
    main()
