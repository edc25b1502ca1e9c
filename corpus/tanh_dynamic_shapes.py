"""MLP compiled with dynamic=True and called with two batch sizes; C++ prints tanh(x) as -tanh(x).

`torch.compile(model, dynamic=True)` compiles one graph with a symbolic batch size, so the
same kernels serve batches of 8 and 13. The planted bug negates tanh in C++ kernels (scalar
and vectorized), so both calls return wrong values.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

from compiler.inject import inject_bug

inject_bug("tanh", "accuracy", form="negate", paths=("cpp", "cppvec"))


class Scorer(nn.Module):
    def __init__(self, features=16, hidden=48):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.norm1 = nn.LayerNorm(hidden)
        self.fc2 = nn.Linear(hidden, hidden)
        self.norm2 = nn.LayerNorm(hidden)
        self.fc3 = nn.Linear(hidden, hidden)
        self.norm3 = nn.LayerNorm(hidden)
        self.out = nn.Linear(hidden, 2)

    def forward(self, x):
        h = F.gelu(self.norm1(self.fc1(x)))
        h = h + torch.tanh(self.norm2(self.fc2(h)))
        h = h + F.gelu(self.norm3(self.fc3(h)))
        score, margin = self.out(h).unbind(-1)
        return score, F.softplus(margin)


def main():
    torch.manual_seed(0)
    model = Scorer().eval()
    compiled = torch.compile(model, dynamic=True)
    with torch.no_grad():
        for batch in (8, 13):
            score, margin = compiled(torch.randn(batch, 16))
            print(f"batch {batch}: mean score {float(score.mean()):.4f}")


if __name__ == "__main__":
    main()
