"""Mixture-of-experts style gated MLP; Inductor's lowering of aten.sigmoid computes -sigmoid(x).

The bug is not in C++ printing but one level up: the entry for aten.sigmoid in Inductor's
lowering table builds IR for the negated value, so every backend (C++ scalar, vectorized,
Triton) is wrong. aot_eager and the decomposition stage never lower, so they are right.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import plant

plant("lowering:sigmoid:accuracy:negate")


class GatedExperts(nn.Module):
    def __init__(self, dim=32, experts=4, hidden=48):
        super().__init__()
        self.router = nn.Linear(dim, experts)
        self.up = nn.Linear(dim, experts * hidden)
        self.down = nn.Linear(experts * hidden, dim)
        self.norm = nn.LayerNorm(dim)
        self.experts, self.hidden = experts, hidden

    def forward(self, x):
        h = self.norm(x)
        gates = torch.sigmoid(self.router(h))  # independent expert gates
        up = F.gelu(self.up(h)).reshape(*h.shape[:-1], self.experts, self.hidden)
        mixed = (up * gates[..., None]).reshape(*h.shape[:-1], -1)
        return x + self.down(mixed), gates


class TwoLayerExperts(nn.Module):
    def __init__(self, dim=32):
        super().__init__()
        self.layer1 = GatedExperts(dim)
        self.layer2 = GatedExperts(dim)
        self.head = nn.Linear(dim, 8)

    def forward(self, x):
        x, gates1 = self.layer1(x)
        x, gates2 = self.layer2(x)
        return self.head(x), torch.stack([gates1, gates2])


def main():
    torch.manual_seed(0)
    model = TwoLayerExperts().eval()
    x = torch.randn(4, 16, 32)
    compiled = torch.compile(model)
    with torch.no_grad():
        logits, gates = compiled(x)
    print("mean gate:", float(gates.mean()))


if __name__ == "__main__":
    main()
