"""A small regression training loop with a planted Dynamo bug: tracing a call of `abs` crashes.

Dynamo raises an internal error while it traces `abs(shift)` in `forward`, before any graph
reaches a backend: torch.compile fails where eager runs, with every backend.
"""
import torch
import torch.nn as nn

from compiler.inject import apply, parse_spec

apply(parse_spec("dynamo:crash:abs"))


class Regressor(nn.Module):
    def __init__(self, dim=8, shift=-2):
        super().__init__()
        self.shift = shift
        self.body = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.body(x).squeeze(-1) + abs(self.shift)


def make_data(n=32, dim=8):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, dim, generator=g)
    return x, x.sum(dim=1)


torch.manual_seed(0)
model = Regressor()
opt = torch.optim.SGD(model.parameters(), lr=0.01)
step_fn = torch.compile(model)
x, y = make_data()
losses = []
for epoch in range(3):
    opt.zero_grad()
    loss = ((step_fn(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    losses.append(loss.item())
print("losses:", [round(v, 3) for v in losses])
