"""Real Dynamo bug: a method of a class defined in a closure appends to a captured list; compiled,
the append is silently dropped.

Source: https://github.com/pytorch/pytorch/issues/197896 ("[dynamo] Mutations of a closure-captured
list/dict are silently dropped when they happen in a method of a locally defined class
instantiated inside the compiled function", open).
`build()` defines `Tracker`, whose `record` appends each batch size to the enclosing `seen`
list; `forward` creates a Tracker and records the batch. The tensor outputs are right, but
compiled the appends never reach `seen`, and the program's own check fails.
torch 2.13.0, CPU, any backend (eager included): eager len(seen) == 3, compiled len(seen) == 0
(AssertionError at the end).
"""
import torch
import torch.nn as nn


def build(dim=8):
    seen = []

    class Tracker:
        def record(self, x):
            seen.append(x.shape[0])

    class Scorer(nn.Module):
        def __init__(self):
            super().__init__()
            self.head = nn.Linear(dim, 1)

        def forward(self, x):
            Tracker().record(x)
            return self.head(x).squeeze(-1)

    return Scorer(), seen


torch.manual_seed(0)
model, seen = build()
compiled = torch.compile(model.eval())
total = 0.0
for step in range(3):
    with torch.no_grad():
        total += float(compiled(torch.randn(4, 8)).sum())
print("calls seen:", len(seen), "total:", round(total, 4))
assert len(seen) == 3, f"expected 3 recorded batches, got {len(seen)}"
