"""torch.compile(fullgraph=True) fails on a training step through BatchNorm1d(momentum=None).

Public report: https://github.com/pytorch/pytorch/issues/194504 (open, 2026). With momentum=None
BatchNorm keeps a cumulative average, `exponential_average_factor = 1.0 /
float(self.num_batches_tracked)`; Dynamo turns the float() of the buffer into an unbacked
symbol and raises `UserError: Could not guard on data-dependent expression FloatTrueDiv(1.0,
ToFloat(u0))`, with every backend (`eager` included). Eager trains; without fullgraph Dynamo
falls back. torch 2.13.0, CPU.
"""
import copy

import torch
import torch.nn as nn


def make_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(6, 4), nn.BatchNorm1d(4, momentum=None), nn.ReLU(), nn.Linear(4, 1))


def train(model, forward, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    torch.manual_seed(1)
    for _ in range(steps):
        x, y = torch.randn(8, 6), torch.randn(8, 1)
        loss = nn.functional.mse_loss(forward(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss.detach(), model[1].running_mean.clone()


eager_model = make_model()
compiled_model = copy.deepcopy(eager_model)
want = train(eager_model, eager_model)
got = train(compiled_model, torch.compile(compiled_model, fullgraph=True))
print("loss eager", want[0].item(), "compiled", got[0].item())
torch.testing.assert_close(got, want)
