"""Drop every op after the one that makes the graph fail (a search over op order).

The prefix of the first k ops, with every value it leaves unread as an output, fails as soon
as it contains the culprit, so the shortest failing prefix ends at the culprit. Each round
tries two prefixes that split the range in three, shortest first; with two workers they are
checked side by side (about log3 instead of log2 rounds of compiles, which matters when each
is a failing C++ build). The prefixes tried never depend on the worker count, and the
shortest reproducing one wins, so `-j 1` finds the same cut.

A crash or a device-side assert that names its kernel (minifier.search.kernel_nodes) gives the
nodes that kernel computes: the search first asks the prefixes ending just before and at them,
and where the first passes and the second fails, searches between them alone. Each failing try
ends its process (on a GPU, alone on the card); a model's few hundred ops took six to ten.
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
    tester = lambda points: first_reproducing(ev, prefix, points, ctx.window)
    lo, hi = failing_kernel_span(ops, ctx, tester)
    full = len(ops) - 1  # the full graph (prefix `full`) reproduces
    cut = shortest_failing_prefix(lo, hi, tester, SPLITS)
    return prefix(cut) if cut < full else None


def failing_kernel_span(ops: list, ctx: Context, first_failing) -> tuple[int, int]:
    """The range of prefixes the shortest failing one lies in: (0, last op) unless the nodes of
    the kernel the failure ran in (ctx.notes["kernel_nodes"]) narrow it. The prefixes ending just
    before the first of them and at the last are asked side by side: the first failing says the
    culprit is earlier, the second passing that it is later; each answer keeps the monotone reading."""
    full = len(ops) - 1
    named = set(ctx.notes.get("kernel_nodes") or ())
    at = [i for i, node in enumerate(ops) if node.name in named]
    if not at:
        return 0, full
    first, last = at[0], at[-1]
    points = ([first - 1] if first > 0 else []) + ([last] if last < full else [])  # prefix `full` fails
    if not points:
        return 0, full
    hit = first_failing(points)
    if hit is None:  # no asked prefix fails: the culprit comes after the last one asked
        return points[-1] + 1, full
    if points[hit] < first:  # fails without the named nodes: another op fails first
        return 0, points[hit]
    return first, points[hit]
