"""Program shape: `torch.compile(model, mode="max-autotune")` on CPU (Inductor may benchmark its
C++ GEMM template against aten.mm; on CPU this compiles in a few seconds).

Plant: the C++ code generators print rsqrt(x) as 2 * rsqrt(x)
(`inject_bug("rsqrt", "accuracy", form="double", paths=("cpp", "cppvec"))`), in the RMSNorm.
Expected answer: exit 0, a verified repro of Dynamo graph 0 (1 graph), kind accuracy, stage
inductor, culprit op rsqrt.
"""
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("rsqrt", "accuracy", form="double", paths=("cpp", "cppvec"))


class RMSNorm(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.weight


class DecoderMLP(nn.Module):
    def __init__(self, d=32, hidden=64):
        super().__init__()
        self.norm = RMSNorm(d)
        self.up = nn.Linear(d, hidden)
        self.down = nn.Linear(hidden, d)

    def forward(self, x):
        return x + self.down(torch.nn.functional.silu(self.up(self.norm(x))))


def main():
    torch.manual_seed(0)
    model = DecoderMLP().eval()
    compiled = torch.compile(model, mode="max-autotune")
    x = torch.randn(8, 32)
    with torch.no_grad():
        y = compiled(x)
    print("norm", round(y.norm().item(), 4))
    return y


if __name__ == "__main__":
    main()
