"""Accuracy bugs: isolate the node where values first diverge (found by minifier.localize.divergence)."""
from __future__ import annotations

import torch.fx as fx

from minifier.graph.edit import op_names, rebuild
from minifier.reduce.passes import Context
from minifier.reduce.passes.isolate_op import isolate
from minifier.reduce.passes.shrink_shapes import resize, size_classes
from minifier.workers.judge import REPRODUCES


def cut_at_divergence(gm, ev, ctx: Context):
    first = ctx.notes.get("first_divergent")
    if not _applies(gm, ctx):
        return None
    single = isolate(gm, first, ctx)
    if single is not None and ev.test(single) == REPRODUCES:
        return single
    cut = rebuild(gm, outputs=[first])
    return cut if ev.test(cut) == REPRODUCES else None


def likely_first(gm: fx.GraphModule, ctx: Context) -> list[fx.GraphModule]:
    """What the reduction of an accuracy bug most often asks first, in order: the divergent
    node alone (this pass), then the same with every input size at 1 (shrink_shapes' first
    try; the passes between find nothing in one op). Sent ahead together, the two new kernels
    build side by side instead of one after the other; a wrong guess costs one compile."""
    if not _applies(gm, ctx):
        return []
    single = isolate(gm, ctx.notes["first_divergent"], ctx)
    if single is None:
        return []
    classes = size_classes(single, ctx.values)
    return [single, resize(single, ctx.values, {c: 1 for c in classes})] if classes else [single]


def _applies(gm: fx.GraphModule, ctx: Context) -> bool:
    first = ctx.notes.get("first_divergent")
    return ctx.kind == "accuracy" and bool(first) and first in op_names(gm) and len(op_names(gm)) >= 2
