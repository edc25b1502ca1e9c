"""The shape of every per-input simplification: propose one step for each input, try them
all at once, and let the delta core find the inputs that must stay as they are."""
from __future__ import annotations

from typing import Callable

import torch.fx as fx

from minifier.graph.edit import placeholders, with_transforms
from minifier.graph.input_transforms import meta_of, with_step
from minifier.reduce.delta import ddmin
from minifier.reduce.passes import Context

# (placeholder, what its value looks like now) -> the step to add, or None to leave it
Proposal = Callable[[fx.Node, object], tuple | None]


def simplify_inputs(gm: fx.GraphModule, ev, ctx: Context, propose: Proposal) -> fx.GraphModule | None:
    """Graph with the proposed step applied to as many inputs as the bug allows (None: none)."""
    steps = {}
    for p in placeholders(gm):
        current = meta_of(ctx.values.get(p.meta.get("value", p.name)), p.meta.get("transform"))
        step = propose(p, current)
        if step is not None:
            steps[p.name] = with_step(p.meta.get("transform"), step)
    if not steps:
        return None
    names = list(steps)

    def build(kept: list[str]) -> fx.GraphModule:
        return with_transforms(gm, {name: steps[name] for name in names if name not in kept})

    kept = ddmin(ev, names, build, ctx.window)
    return build(kept) if len(kept) < len(names) else None
