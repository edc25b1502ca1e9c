"""Real Dynamo bug: a nested_compile_region that reads a module global rebound in a loop.

Source: https://github.com/pytorch/pytorch/issues/191821 ("[nested compile region] silently
incorrect result on global mutation", closed upstream; the fix is not in 2.13).
`unroll` rebinds the global `ctx` to a new Context each step and calls `step()`, a
torch.compiler.nested_compile_region that reads `ctx.hidden`. Compiled, the region keeps reading
the first step's `ctx`, so every step after the first sees stale input.
torch 2.13.0, CPU, any backend (eager included): eager returns h0 + 3 * bias, compiled h0 + bias.
"""
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class Context:
    hidden: torch.Tensor


torch.manual_seed(0)
ctx = Context(torch.zeros(4))
cell = nn.Linear(4, 4)
nn.init.eye_(cell.weight)


@torch.compiler.nested_compile_region
def step():
    return cell(ctx.hidden)


def unroll(h, steps=3):
    global ctx
    for _ in range(steps):
        ctx = Context(h)
        h = step()
    return h


def log_norms(values):
    """Unrelated bookkeeping between iterations."""
    return [round(float(v.norm()), 4) for v in values]


compiled = torch.compile(unroll, fullgraph=True)
norms = []
for it in range(2):
    with torch.no_grad():
        out = compiled(torch.randn(4))
    norms.append(out)
print("norms:", log_norms(norms))
