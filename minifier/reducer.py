"""The pass scheduler: cheap, high-yield passes first, all of them again until nothing shrinks.

Progress means a smaller score (op nodes, then input elements), never just a different graph.
"""
from __future__ import annotations

import time
from typing import Callable

import torch
import torch.fx as fx

from minifier.evaluate import Evaluator
from minifier.graph_edit import op_nodes, placeholders
from minifier.passes import Context
from minifier.passes.cut_after_culprit import cut_after_culprit
from minifier.passes.cut_at_divergence import cut_at_divergence
from minifier.passes.isolate_op import isolate_last_op
from minifier.passes.remove_outputs import remove_outputs
from minifier.passes.replace_ops_with_inputs import replace_ops_with_inputs

PASSES = (cut_at_divergence, cut_after_culprit, isolate_last_op, remove_outputs, replace_ops_with_inputs)
MAX_ROUNDS = 5


def score(gm: fx.GraphModule, values: dict) -> tuple[int, int]:
    numel = sum(v.numel() for p in placeholders(gm)
                if isinstance(v := values.get(p.meta.get("value", p.name)), torch.Tensor))
    return len(op_nodes(gm)), numel


def reduce_graph(gm: fx.GraphModule, ev: Evaluator, ctx: Context,
                 progress: Callable[[str, fx.GraphModule], None] = lambda name, gm: None,
                 deadline: float | None = None) -> fx.GraphModule:
    for _ in range(MAX_ROUNDS):
        shrunk = False
        for reduction in PASSES:
            if deadline is not None and time.monotonic() > deadline:
                return gm
            smaller = reduction(gm, ev, ctx)
            if smaller is not None and score(smaller, ctx.values) < score(gm, ctx.values):
                gm, shrunk = smaller, True
                progress(reduction.__name__, gm)
        if not shrunk:
            break
    return gm
