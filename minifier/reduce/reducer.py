"""The pass scheduler: cheap, high-yield passes first, all of them again until nothing shrinks.

Progress means a smaller score (minifier.reduce.score: op nodes, then input elements, ...), never
just a different graph. Before anything is compiled, candidates are checked on fake tensors
in this process (minifier.reduce.validate); malformed ones never reach a worker. The reduction
stops early when its budget (time, compiles) runs out or the user presses Ctrl-C, and then
returns the best candidate seen so far. With a checkpoint, every step is saved as it is
accepted, and a resumed run replays the saved answers instead of compiling again.

Every pass is deterministic and accepts candidates in order (the delta core's speculative
windows take the first reproducing candidate of a window, not the first to finish), so the
result does not depend on the number of workers.
"""
from __future__ import annotations

from typing import Callable

import torch.fx as fx

from minifier.reduce.budget import Budget, Exhausted, Guarded
from minifier.reduce.checkpoint import Checkpoint, fingerprint
from minifier.workers.evaluate import Evaluator
from minifier.reduce.passes import Context
from minifier.reduce.passes.cut_after_culprit import cut_after_culprit
from minifier.reduce.passes.cut_at_divergence import cut_at_divergence
from minifier.reduce.passes.drop_unit_dims import drop_unit_dims
from minifier.reduce.passes.fold_into_input import fold_into_input
from minifier.reduce.passes.isolate_op import isolate_last_op
from minifier.reduce.passes.make_contiguous import make_contiguous
from minifier.reduce.passes.remove_outputs import remove_outputs
from minifier.reduce.passes.replace_convs_with_channels_last_inputs import replace_convs_with_channels_last_inputs
from minifier.reduce.passes.replace_operands import replace_operands
from minifier.reduce.passes.replace_ops_with_inputs import replace_ops_with_inputs
from minifier.reduce.passes.shrink_shapes import shrink_shapes
from minifier.reduce.passes.simplify_values import simplify_values
from minifier.reduce.score import score
from minifier.reduce.validate import validator

# Structure first (fewest ops), then operands, then the inputs: strides before sizes (a
# one-element tensor has no strides left to lose), sizes before rank, values last.
PASSES = (cut_at_divergence, cut_after_culprit, isolate_last_op, remove_outputs, replace_ops_with_inputs,
          replace_convs_with_channels_last_inputs, replace_operands, fold_into_input, make_contiguous, shrink_shapes, drop_unit_dims, simplify_values)
MAX_ROUNDS = 5


def reduce_graph(gm: fx.GraphModule, ev: Evaluator, ctx: Context,
                 progress: Callable[[str, fx.GraphModule], None] = lambda name, gm: None,
                 deadline: float | None = None, max_compiles: int | None = None,
                 budget: Budget | None = None, resume: bool = False) -> fx.GraphModule:
    """The smallest graph found that still shows `ev`'s failure. `budget` (shared by every
    reduction of a run) overrides `deadline`/`max_compiles`; why it stopped early, if it did,
    is in `ctx.notes["stopped"]`."""
    budget = budget or Budget(deadline, max_compiles)
    ev.validate = validator(ctx.values, base=gm)  # only the checks gm passes: else trust the workers
    store = Checkpoint(ev.case_dir, fingerprint(ctx.values))
    if resume:
        ctx.notes["resumed_answers"] = store.load_answers(ev.cache)
    guard = Guarded(ev, budget, lambda g: score(g, ctx.values), gm)
    best = gm
    try:
        budget.check()
        for _ in range(MAX_ROUNDS):
            shrunk = False
            for reduction in PASSES:
                smaller = reduction(best, guard, ctx)
                if smaller is not None and score(smaller, ctx.values) < score(best, ctx.values):
                    best, shrunk = smaller, True
                    store.save(ev.cache, ev.signature, best)
                    progress(reduction.__name__, best)
            if not shrunk:
                break
    except Exhausted as stop:
        ctx.notes["stopped"] = str(stop)
    except KeyboardInterrupt:
        budget.stopped = ctx.notes["stopped"] = "interrupted"
    if ctx.notes.get("stopped"):
        if guard.best_score < score(best, ctx.values):
            best = guard.best
        answers = None if ctx.notes["stopped"] == "interrupted" else ev.cache
        store.save(answers, ev.signature, best, stopped=ctx.notes["stopped"])
    return best
