"""Half-precision decoder MLP with RMSNorm; C++ code prints rsqrt(x) as 2*rsqrt(x).

The whole model runs in float16 on the CPU. Its RMSNorm layers call torch.rsqrt, which the
planted bug doubles in C++ kernels (scalar and vectorized), so every normalized activation is
twice too large and the outputs differ from eager far beyond fp16 rounding.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("rsqrt", "accuracy", form="double", paths=("cpp", "cppvec"))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class DecoderMLP(nn.Module):
    def __init__(self, dim=64, hidden=128, layers=3):
        super().__init__()
        self.norms = nn.ModuleList(RMSNorm(dim) for _ in range(layers))
        self.ups = nn.ModuleList(nn.Linear(dim, hidden) for _ in range(layers))
        self.downs = nn.ModuleList(nn.Linear(hidden, dim) for _ in range(layers))
        self.final = nn.Linear(dim, 32)

    def forward(self, x):
        for norm, up, down in zip(self.norms, self.ups, self.downs):
            x = x + down(F.gelu(up(norm(x)), approximate="tanh"))
        return self.final(x)


def main():
    torch.manual_seed(0)
    model = DecoderMLP().half().eval()
    x = torch.randn(4, 10, 64).half()
    compiled = torch.compile(model)
    with torch.no_grad():
        y = compiled(x)
    print("output norm:", float(y.float().norm()))


if __name__ == "__main__":
    main()
