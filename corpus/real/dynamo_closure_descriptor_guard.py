"""Real Dynamo bug: closures over different Tensor method descriptors share one compiled graph.

Source: https://github.com/pytorch/pytorch/issues/197811 ("[dynamo] torch.compile silently reuses
a graph when closures capture different Tensor method descriptors", open).
`make_merge(op)` returns a closure over `op`; the merges built from `torch.Tensor.__add__` and
`torch.Tensor.__mul__` share one code object, and Dynamo puts no guard on the captured
descriptor, so compiling the `mul` merge reuses the graph traced for `add`.
torch 2.13.0, CPU, any backend (eager included): eager mul-merge returns a * b, compiled a + b.
"""
import torch
import torch.nn as nn


def make_merge(op):
    def merge(a, b):
        return op(a, b)
    return merge


class TwoTower(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.left, self.right = nn.Linear(dim, dim), nn.Linear(dim, dim)

    def forward(self, x):
        return self.left(x), self.right(x)


def describe(name, t):
    """Unrelated reporting."""
    return f"{name}: mean={float(t.mean()):.4f}"


torch.manual_seed(0)
model = TwoTower().eval()
merges = {name: torch.compile(make_merge(op)) for name, op in
          [("sum", torch.Tensor.__add__), ("gate", torch.Tensor.__mul__)]}
for step in range(2):
    with torch.no_grad():
        a, b = model(torch.randn(3, 8))
    for name, merge in merges.items():
        print(describe(name, merge(a, b)))
