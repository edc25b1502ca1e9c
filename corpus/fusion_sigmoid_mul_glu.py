"""Gated linear units; a C++ codegen bug that only exists when sigmoid and mul share a kernel.

The planted bug prints `mul` as 2*(a*b) only when one operand was computed by `sigmoid` in
the same kernel. In the model, each GLU `a * sigmoid(b)` is one fused kernel, so the output
is wrong. A repro needs both ops: fed the sigmoid's value as an input, mul alone is printed
correctly, and sigmoid alone has no mul to corrupt.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("fusion:sigmoid+mul:accuracy:double@cpp,cppvec")


class GLUStack(nn.Module):
    def __init__(self, dim=32, layers=3, classes=5):
        super().__init__()
        self.norms = nn.ModuleList(nn.LayerNorm(dim) for _ in range(layers))
        self.projs = nn.ModuleList(nn.Linear(dim, 2 * dim) for _ in range(layers))
        self.outs = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        for norm, proj, out in zip(self.norms, self.projs, self.outs):
            a, b = proj(norm(x)).chunk(2, dim=-1)
            x = x + out(a * torch.sigmoid(b))
        return self.head(F.gelu(x))


def main():
    torch.manual_seed(0)
    model = GLUStack().eval()
    x = torch.randn(8, 32)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(x)
    print("logits[0]:", logits[0])


if __name__ == "__main__":
    main()
