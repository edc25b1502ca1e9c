"""Real Dynamo bug: `getattr(<builtin type>, <missing name>)` inside try/except does not raise.

Source: https://github.com/pytorch/pytorch/issues/198197 ("torch.compile (dynamo) - try/except
getattr(<builtin type>, <missing attr>) takes the wrong branch", open).
`has_feature(int, "__fast_act__")` returns False in eager (AttributeError is caught); traced by
Dynamo the getattr does not raise, the else branch runs, and forward picks the other activation.
torch 2.13.0, CPU, any backend (eager included): eager applies tanh, compiled applies sigmoid.
"""
import torch
import torch.nn as nn


def has_feature(obj, name):
    try:
        getattr(obj, name)
    except AttributeError:
        return False
    else:
        return True


class Block(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        h = self.proj(x)
        act = torch.sigmoid if has_feature(int, "__fast_act__") else torch.tanh
        return act(h).sum(-1)


def running_mean(values):
    """Unrelated bookkeeping."""
    return sum(float(v.mean()) for v in values) / len(values)


torch.manual_seed(0)
model = Block().eval()
compiled = torch.compile(model)
outs = []
for step in range(3):
    with torch.no_grad():
        outs.append(compiled(torch.randn(4, 8)))
print("mean:", running_mean(outs))
