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
from minifier.reduce.passes import Context
from minifier.reduce.passes.registry import PASSES, Pass
from minifier.reduce.score import score
from minifier.reduce.validate import validator
from minifier.workers.evaluate import Evaluator

MAX_ROUNDS = 5


def reduce_graph(gm: fx.GraphModule, ev: Evaluator, ctx: Context,
                 progress: Callable[[str, fx.GraphModule], None] = lambda name, gm: None,
                 deadline: float | None = None, max_compiles: int | None = None,
                 budget: Budget | None = None, resume: bool = False,
                 before: Callable[[str, fx.GraphModule], None] = lambda name, gm: None) -> fx.GraphModule:
    """The smallest graph found that still shows `ev`'s failure. `budget` (shared by every
    reduction of a run) overrides `deadline`/`max_compiles`; why it stopped early, if it did,
    is in `ctx.notes["stopped"]`. `progress` hears of each graph kept, `before` of each pass
    about to run on the best graph so far."""
    budget = budget or Budget(deadline, max_compiles)
    if ev.validate is None:  # else the caller chose (minifier.search.bugs.reduce_bug)
        ev = with_candidate_check(ev, gm, ctx.values)
    store = Checkpoint(ev.case_dir, fingerprint(ctx.values))
    if resume:
        ctx.notes["resumed_answers"] = store.load_answers(ev.cache)
    guard = Guarded(ev, budget, lambda g: score(g, ctx.values), gm)
    stats = ctx.notes.setdefault("passes", {p.name: {"runs": 0, "compiles": 0, "successes": 0} for p in PASSES})
    best = gm
    try:
        budget.check()
        for _ in range(MAX_ROUNDS):
            shrunk = False
            for reduction in PASSES:
                before(reduction.name, best)
                smaller = _run_pass(reduction, best, guard, ctx, stats[reduction.name])
                if smaller is not None and score(smaller, ctx.values) < score(best, ctx.values):
                    best, shrunk = smaller, True
                    stats[reduction.name]["successes"] += 1
                    store.save(ev.cache, ev.signature, best)
                    progress(reduction.name, best)
            if not shrunk:
                break
    except Exhausted as stop:
        ctx.notes["stopped"] = str(stop)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM: the run stops here, its best so far checkpointed
        budget.stopped = ctx.notes["stopped"] = "interrupted"
        # The cache holds answers only: one from a worker the stop killed is never recorded
        # (minifier.workers.stop), so --resume reuses them all.
        store.save(ev.cache, ev.signature, guard.best if guard.best_score < score(best, ctx.values) else best,
                   stopped="interrupted")
        raise
    if ctx.notes.get("stopped"):
        if guard.best_score < score(best, ctx.values):
            best = guard.best
        store.save(ev.cache, ev.signature, best, stopped=ctx.notes["stopped"])
    return best


def with_candidate_check(ev: Evaluator, gm: fx.GraphModule, values: dict) -> Evaluator:
    """`ev` with every candidate checked before any worker sees it (it prints, parses and traces
    back into the same ops; on fake tensors where they can model `gm`): llvm-reduce's verifier."""
    return ev.for_bug(ev.stage, ev.signature, ev.culprit, validate=validator(values, base=gm))


def _run_pass(reduction: Pass, gm: fx.GraphModule, guard: Guarded, ctx: Context, stats: dict) -> fx.GraphModule | None:
    """One run of a pass, its compiles (those charged to the budget while it ran) counted in
    `stats` (Hypothesis's ShrinkPass accounting: which passes earn their compiles)."""
    spent = guard.budget.spent
    stats["runs"] += 1
    try:
        return reduction.fn(gm, guard, ctx)
    finally:
        stats["compiles"] += guard.budget.spent - spent
