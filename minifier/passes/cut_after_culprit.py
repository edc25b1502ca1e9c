"""Drop every op after the one that makes the graph fail (binary search over op order).

The prefix of the first k ops, with every value it leaves unread as an output, fails as soon
as it contains the culprit, so the shortest failing prefix ends at the culprit.
"""
from __future__ import annotations

from minifier.evaluate import REPRODUCES
from minifier.graph_edit import op_nodes, rebuild, sinks
from minifier.passes import Context


def cut_after_culprit(gm, ev, ctx: Context):
    ops = op_nodes(gm)
    if len(ops) < 2:
        return None
    lo, hi = 0, len(ops) - 1  # the full graph (prefix hi) reproduces
    best = None
    while lo < hi:
        mid = (lo + hi) // 2
        candidate = rebuild(gm, outputs=sinks(gm, mid))
        if ev.test(candidate) == REPRODUCES:
            hi, best = mid, candidate
        else:
            lo = mid + 1
    return best
