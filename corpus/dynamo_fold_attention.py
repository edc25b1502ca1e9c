"""Multi-head attention scorer with a planted Dynamo bug: `operator.mul` on Python ints folds wrongly.

While Dynamo traces `forward`, `self.heads * self.head_dim` (two int attributes) is folded to
the right product plus one, so the graph handed to the backend already scales by 1/sqrt(17)
where eager scales by 1/sqrt(16). Every captured graph matches eager on its own inputs; only
the program's outputs differ, with any backend, `eager` included: Dynamo's mistake.
"""
import math

import torch
import torch.nn as nn

from compiler.inject import apply, parse_spec

apply(parse_spec("dynamo:fold:mul"))


class Scorer(nn.Module):
    def __init__(self, heads=2, head_dim=8):
        super().__init__()
        self.heads, self.head_dim = heads, head_dim
        self.qkv = nn.Linear(heads * head_dim, 3 * heads * head_dim)
        self.out = nn.Linear(heads * head_dim, 1)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        width = self.heads * self.head_dim
        attn = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(width), dim=-1)
        return self.out(attn @ v).squeeze(-1)


def summarize(scores):
    """Unrelated bookkeeping the script does between steps."""
    return {"mean": float(scores.mean()), "max": float(scores.max())}


torch.manual_seed(0)
model = Scorer().eval()
compiled = torch.compile(model)
history = []
for step in range(3):
    batch = torch.randn(4, 5, 16)
    with torch.no_grad():
        scores = compiled(batch)
    history.append(summarize(scores))
print("steps:", len(history), "last:", history[-1])
