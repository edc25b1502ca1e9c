"""Feed strided inputs as plain contiguous tensors when the bug does not need the strides."""
from __future__ import annotations

import torch

from minifier.reduce.passes import Context
from minifier.reduce.passes.per_input import simplify_inputs


def make_contiguous(gm, ev, ctx: Context):
    def propose(p, current):
        strided = isinstance(current, torch.Tensor) and not current.is_contiguous()
        return ("contiguous",) if strided else None

    return simplify_inputs(gm, ev, ctx, propose)
