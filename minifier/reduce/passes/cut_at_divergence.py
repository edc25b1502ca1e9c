"""Accuracy bugs: isolate the node where values first diverge (found by minifier.localize.divergence)."""
from __future__ import annotations

from minifier.workers.evaluate import REPRODUCES
from minifier.reduce.graph_edit import op_names, rebuild
from minifier.reduce.passes import Context
from minifier.reduce.passes.isolate_op import isolate


def cut_at_divergence(gm, ev, ctx: Context):
    first = ctx.notes.get("first_divergent")
    if ctx.kind != "accuracy" or not first or first not in op_names(gm) or len(op_names(gm)) < 2:
        return None
    single = isolate(gm, first, ctx)
    if single is not None and ev.test(single) == REPRODUCES:
        return single
    cut = rebuild(gm, outputs=[first])
    return cut if ev.test(cut) == REPRODUCES else None
