"""Transformer block whose GELU decomposition is wrong: a bug before Inductor codegen.

Inductor decomposes aten.gelu while AOTAutograd traces the graph, using its own
decomposition table; the planted entry returns 2*gelu(x). The `aot_eager_decomp_partition`
backend uses the same table, so the bug already shows there, while plain `aot_eager` (no
Inductor decompositions) is right: the first failing stage is the decomposition stage.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("decomposition:gelu:accuracy:double")


class Block(nn.Module):
    def __init__(self, dim=48, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, 4 * dim)
        self.ff2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        attn = torch.softmax(q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5, dim=-1)
        x = x + self.proj((attn @ v).transpose(1, 2).reshape(b, t, d))
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


def main():
    torch.manual_seed(0)
    block = Block().eval()
    x = torch.randn(2, 16, 48)
    compiled = torch.compile(block)
    with torch.no_grad():
        y = compiled(x)
    print("output std:", float(y.std()))


if __name__ == "__main__":
    main()
