"""Accuracy bugs: compile once with every intermediate exposed, cut at the first that diverges."""
from __future__ import annotations

import re

from minifier.evaluate import REPRODUCES
from minifier.graph_edit import op_nodes, rebuild
from minifier.passes import Context
from minifier.passes.isolate_op import isolate


def cut_at_divergence(gm, ev, ctx: Context):
    if ctx.kind != "accuracy" or "first_divergent" in ctx.notes:
        return None
    exposed = [n.name for n in op_nodes(gm) if _is_tensor(ctx.values.get(n.name))]
    if len(exposed) < 2:
        return None
    answer = ev.outcomes([rebuild(gm, outputs=exposed)])[0]
    if ev.verdict(answer) != REPRODUCES:
        ctx.notes["first_divergent"] = None  # the divergence needs the graph as it is (fusion?)
        return None
    bad = [_index(m["output"]) for m in answer.get("metrics", []) if not m.get("ok")]
    if not bad:
        return None
    first = exposed[min(bad)]
    ctx.notes["first_divergent"] = first
    ctx.notes["divergent_metrics"] = answer["metrics"][min(bad)]
    single = isolate(gm, first, ctx)
    if single is not None and ev.test(single) == REPRODUCES:
        return single
    cut = rebuild(gm, outputs=[first])
    return cut if ev.test(cut) == REPRODUCES else None


def _is_tensor(value) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _index(path: str) -> int:
    return int(re.match(r"out\[(\d+)\]", path).group(1))
