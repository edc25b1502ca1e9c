"""Drop every op after the one that makes the graph fail (a search over op order).

The prefix of the first k ops, with every value it leaves unread as an output, fails as soon
as it contains the culprit, so the shortest failing prefix ends at the culprit. Each round
tries two prefixes that split the range in three, shortest first; with two workers they are
checked side by side (about log3 instead of log2 rounds of compiles, which matters when each
is a failing C++ build). The prefixes tried never depend on the worker count, and the
shortest reproducing one wins, so `-j 1` finds the same cut.
"""
from __future__ import annotations

from minifier.graph.edit import op_nodes, rebuild, sinks
from minifier.reduce.delta import first_reproducing
from minifier.reduce.delta_core import shortest_failing_prefix
from minifier.reduce.passes import Context

SPLITS = 2  # prefixes tried per round


def cut_after_culprit(gm, ev, ctx: Context):
    ops = op_nodes(gm)
    if len(ops) < 2:
        return None
    prefix = lambda upto: rebuild(gm, outputs=sinks(gm, upto))
    full = len(ops) - 1  # the full graph (prefix `full`) reproduces
    cut = shortest_failing_prefix(0, full, lambda points: first_reproducing(ev, prefix, points, ctx.window), SPLITS)
    return prefix(cut) if cut < full else None
