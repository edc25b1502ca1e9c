"""Where an accuracy failure starts: the nodes whose compiled value diverges from eager while
every value they read still agrees. Each such root is a distinct bug.

Observing a value means making it an output of the graph and judging it with the oracle.
Making every intermediate an output changes Inductor's kernels (each value needs a store of
its own), and on a CPU every changed kernel is seconds of g++. So a worker looks in two
steps (minifier.workers.divergence_worker), both answered in one job:
1. the values Inductor stores anyway: each node whose value leaves the kernel that computes
   it (read by another kernel, or an output). Exposing those keeps the graph's kernels, which
   come from the kernel cache. This finds the first wrong kernel output.
2. every node between that output and the agreeing values before it (the inside of the
   fused kernel), on that small piece alone, fed with recorded eager values. Where those
   nodes are extern calls (a Linear's addmm whose output the activation's kernel overwrites
   in place) they are run alone, with no kernel to build: agreeing, they leave the stored
   root as it was judged, in the graph's own kernels.
If that finds nothing (the bug needs more of the graph), every intermediate of the whole
graph is exposed at once, as before. Fusion changes when everything is an output, so a bug
that needs a fused kernel may not show there; then there are no roots and reduction works
without them.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch.fx as fx

from minifier.graph.edit import rebuild
from minifier.graph.nodes import exposed_nodes, judged_in_chunks, roots
from minifier.workers.answer import Answer
from minifier.workers.ask import Asker
from repro.value_store import memory_budget


@dataclass
class Divergence:
    roots: list[str]  # nodes in graph order
    metrics: dict  # node name -> oracle metrics of its value
    exposed: list[str]  # nodes that could be observed
    how: str = "every"  # "stored" (steps 1-2 above) or "every" (every intermediate at once)


def find_divergence(gm: fx.GraphModule, ev: Asker, values: dict) -> Divergence | None:
    exposed = exposed_nodes(gm, values)
    if not exposed:
        return None
    if ev.stage == "inductor":
        answer = ev.divergence(gm)
        if Answer.from_wire(answer).status == "ok":  # it fell back to every intermediate itself if it had to
            return Divergence(answer["roots"], answer["metrics"], answer["observed"], answer["how"])
    return every_intermediate(gm, ev, exposed, values)  # another stage (no kernels), or the job failed


def every_intermediate(gm: fx.GraphModule, ev: Asker, exposed: list[str], values: dict) -> Divergence | None:
    """One compile with every intermediate an output (the fallback; its kernels are all new), or
    one per memory budget's worth of values."""
    metrics = judged_in_chunks(lambda chunk: ev.outcomes([rebuild(gm, outputs=chunk)])[0], exposed,
                               values, memory_budget())
    if metrics is None:
        return None
    return Divergence(roots(gm, metrics), metrics, exposed)
