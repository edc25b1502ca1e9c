"""Five-layer transformer encoder (over 200 FX nodes); C++ prints erf(x) as erf(x) + 1.

Every feed-forward block uses exact GELU, which Inductor computes through erf, so all five
layers are miscompiled by the planted bug in C++ kernels (scalar and vectorized). A large,
realistic graph: attention, layer norms, residuals, masking, pooling.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("erf", "accuracy", form="add_one", paths=("cpp", "cppvec"))


class EncoderLayer(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, 4 * dim)
        self.ff2 = nn.Linear(4 * dim, dim)

    def forward(self, x, key_mask):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).chunk(3, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = (q @ k.transpose(-1, -2)) * (d // self.heads) ** -0.5
        scores = scores.masked_fill(~key_mask[:, None, None, :], float("-inf"))
        y = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))


class Encoder(nn.Module):
    def __init__(self, vocab=500, dim=48, heads=4, layers=5, classes=4):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Parameter(torch.randn(64, dim) * 0.02)
        self.layers = nn.ModuleList(EncoderLayer(dim, heads) for _ in range(layers))
        self.ln = nn.LayerNorm(dim)
        self.cls = nn.Linear(dim, classes)

    def forward(self, ids, key_mask):
        x = self.tok(ids) + self.pos[: ids.shape[1]]
        for layer in self.layers:
            x = layer(x, key_mask)
        x = self.ln(x)
        pooled = (x * key_mask[..., None]).sum(1) / key_mask.sum(1, keepdim=True)
        return self.cls(pooled)


def main():
    torch.manual_seed(0)
    model = Encoder().eval()
    ids = torch.randint(0, 500, (4, 20))
    key_mask = torch.arange(20)[None, :] < torch.tensor([20, 15, 9, 4])[:, None]
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(ids, key_mask)
    print("predicted:", logits.argmax(-1).tolist())


if __name__ == "__main__":
    main()
