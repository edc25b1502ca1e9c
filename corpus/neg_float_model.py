"""Self-attention block with rotary position embeddings, with a planted C++ codegen bug in `neg`.

Inductor's C++ backend is made to print neg(x) as 2*x instead of -x (scalar path:
`decltype(x)(2 * x)`, vectorized path: `decltype(x)(2) * x`). The only neg in the model is
the one in `rotate_half`, so the rotary embedding of queries and keys comes out wrong and
the attention output differs noticeably from eager.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("neg", template="decltype({x})(2 * {x})", paths=("cpp",))
inject_bug("neg", template="decltype({x})(2) * {x}", paths=("cppvec",))


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([torch.neg(x2), x1], dim=-1)


class RotaryAttentionBlock(nn.Module):
    def __init__(self, dim=64, heads=4, max_len=128):
        super().__init__()
        self.heads = heads
        self.head_dim = dim // heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(max_len).float(), inv_freq)
        angles = torch.cat([angles, angles], dim=-1)
        self.register_buffer("cos", angles.cos())
        self.register_buffer("sin", angles.sin())

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).chunk(3, dim=-1)
        q = q.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.heads, self.head_dim).transpose(1, 2)

        cos, sin = self.cos[:t], self.sin[:t]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin

        scores = (q @ k.transpose(-2, -1)) / self.head_dim**0.5
        attn = torch.softmax(scores, dim=-1)
        out = (attn @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(out)
        x = x + self.fc2(F.gelu(self.fc1(self.norm2(x))))
        return x


def main():
    torch.manual_seed(0)
    model = RotaryAttentionBlock().eval()
    x = torch.randn(2, 16, 64)

    compiled = torch.compile(model)
    with torch.no_grad():
        for _ in range(2):
            y = compiled(x)
    print("output:", tuple(y.shape), "mean", float(y.mean()), "std", float(y.std()))


if __name__ == "__main__":
    main()
