"""Sequence model fed a transposed (non-contiguous) tensor; C++ prints exp(x) as exp(x) + 1.

The data arrive as (batch, features, time) and the model is called on `x.transpose(1, 2)`,
a non-contiguous view, so the compiled graph's input has strides (F*T, 1, T). The planted
bug adds one to exp in C++ kernels (scalar and vectorized), which shifts the attention
pooling weights (a doubling would cancel in the normalization).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("exp", "accuracy", form="add_one", paths=("cpp", "cppvec"))


class GatedSequenceModel(nn.Module):
    def __init__(self, features=12, hidden=40, classes=5):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.norm = nn.LayerNorm(hidden)
        self.conv = nn.Conv1d(hidden, hidden, 3, padding=1)
        self.norm2 = nn.LayerNorm(hidden)
        self.score = nn.Linear(hidden, 1)
        self.mid = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, classes)

    def forward(self, x):  # x: (batch, time, features), any strides
        h = F.gelu(self.norm(self.inp(x)))
        h = h + F.gelu(self.norm2(self.conv(h.transpose(1, 2)).transpose(1, 2)))
        weights = torch.exp(self.score(h).clamp(max=10.0))  # unnormalized attention weights
        pooled = (h * weights).sum(1) / weights.sum(1)
        return self.out(torch.tanh(self.mid(pooled)))


def main():
    torch.manual_seed(0)
    model = GatedSequenceModel().eval()
    raw = torch.randn(5, 12, 30)  # (batch, features, time)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits = compiled(raw.transpose(1, 2))
    print("logits[0]:", logits[0])


if __name__ == "__main__":
    main()
