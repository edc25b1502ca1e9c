"""Inputs of lower rank: drop size-1 dims (a [1, 1, 4] input becomes [4]) where the graph
still runs (checked on fake tensors first) and the bug persists."""
from __future__ import annotations

import torch

from minifier.reduce.passes import Context
from minifier.reduce.passes.per_input import simplify_inputs


def drop_unit_dims(gm, ev, ctx: Context):
    def propose(p, current):
        if not isinstance(current, torch.Tensor) or 1 not in current.shape:
            return None
        return ("view", tuple(d for d in current.shape if d != 1))

    return simplify_inputs(gm, ev, ctx, propose)
