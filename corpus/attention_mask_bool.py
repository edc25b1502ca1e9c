"""Causal self-attention with padding; the vectorized C++ `&` of two masks is always true.

The attention mask is `causal & not_padding`, a bool tensor the block also returns. The
planted bug prints the vectorized bitwise-and as a constant (`cppvec`, form `constant`),
so the returned mask is all true (an exact bool mismatch) and padded or future positions
leak into the attention.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("bitwise_and", "accuracy", form="constant", paths=("cppvec",))


class MaskedSelfAttention(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x, lengths):
        b, t, d = x.shape
        pos = torch.arange(t)
        causal = pos[None, :, None] >= pos[None, None, :]
        not_padding = (pos[None, None, :] < lengths[:, None, None])
        mask = causal & not_padding  # (b, t, t) bool
        q, k, v = self.qkv(self.norm(x)).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-1, -2) / (d // self.heads) ** 0.5
        scores = scores.masked_fill(~mask[:, None], -1e4)
        attn = torch.softmax(scores, dim=-1)
        y = (attn @ v).transpose(1, 2).reshape(b, t, d)
        return x + self.out(y), mask


def main():
    torch.manual_seed(0)
    block = MaskedSelfAttention().eval()
    x = torch.randn(3, 12, 32)
    lengths = torch.tensor([12, 7, 3])
    compiled = torch.compile(block)
    with torch.no_grad():
        y, mask = compiled(x, lengths)
    print("visible keys per query (batch 1):", mask[1].sum(-1).tolist())


if __name__ == "__main__":
    main()
