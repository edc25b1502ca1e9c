"""CUDA float16 decoder MLP with RMSNorm; Triton prints rsqrt(x) as 2*rsqrt(x).

Needs a CUDA GPU. Same model as the CPU case rsqrt_rmsnorm_fp16, on the Triton path.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("rsqrt", "accuracy", form="double", paths=("triton",))


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class DecoderMLP(nn.Module):
    def __init__(self, dim=64, hidden=128, layers=2):
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
    model = DecoderMLP().cuda().half().eval()
    x = torch.randn(4, 10, 64, device="cuda", dtype=torch.float16)
    compiled = torch.compile(model)
    with torch.no_grad():
        y = compiled(x)
    print("output norm:", float(y.float().norm()))


if __name__ == "__main__":
    main()
