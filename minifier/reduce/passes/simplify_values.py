"""Simpler input values: zeros where the values do not matter, else ones, else small integers
(fewer distinct values). Each level is tried on all inputs at once, then input by input."""
from __future__ import annotations

import torch

from minifier.graph.edit import input_ref
from minifier.graph.input_transforms import VALUE_KINDS, resolve, value_cost, with_step
from minifier.reduce.passes import Context
from minifier.reduce.passes.per_input import simplify_inputs


def simplify_values(gm, ev, ctx: Context):
    result = None
    for level, kind in enumerate(VALUE_KINDS):
        def propose(p, current, kind=kind, level=level):
            if not isinstance(current, torch.Tensor) or value_cost(p.meta.get("transform")) <= level:
                return None
            now = resolve(ctx.values, input_ref(p))
            simpler = resolve(ctx.values, (p.meta.get("value", p.name), with_step(p.meta.get("transform"), (kind,))))
            return None if _same(now, simpler) else (kind,)

        smaller = simplify_inputs(result if result is not None else gm, ev, ctx, propose)
        result = smaller if smaller is not None else result
    return result


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Would the candidate see exactly the values it sees now? Then there is nothing to try."""
    return a.dtype == b.dtype and a.shape == b.shape and bool(torch.equal(a, b))
