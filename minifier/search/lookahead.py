"""The input passes' likely questions, asked ahead.

Once a crash's, error's or assert's reduction keeps one op, the passes left (shrink_shapes,
drop_unit_dims, simplify_values) each ask one question when the bug allows everything at once,
each on the graph the one before kept: three checks one after another, each waiting on a
worker's start-up in a device assert's reduction, where every check ends its worker. What each
would ask if every answer before it reproduces is known at once: each pass is run against an
optimist, an evaluator that answers "reproduces" without compiling and keeps what it was asked.
Those questions are sent to the workers together; the passes still ask them in order and find
the answers waiting, so the result is the one the passes find without the lookahead. A wrong
guess costs the compiles of the questions after it (at most LIMIT in all).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable

import torch.fx as fx

from minifier.reduce.passes import Context
from minifier.reduce.passes.registry import BY_NAME
from minifier.workers.judge import INVALID, REPRODUCES

INPUT_PASSES = ("shrink_shapes", "drop_unit_dims", "simplify_values")
LIMIT = 3


class Optimist:
    """Answers "reproduces" to every candidate the evaluator's own check (`validate`) lets
    through and "invalid" to the rest, as the evaluator would without compiling; compiles
    nothing and keeps the valid questions in order."""

    def __init__(self, validate: Callable[[fx.GraphModule], str | None] | None):
        self.validate = validate
        self.asked: list[fx.GraphModule] = []

    def test_many(self, gms: list[fx.GraphModule]) -> list[str]:
        return [self._answer(gm) for gm in gms]

    def test(self, gm: fx.GraphModule) -> str:
        return self._answer(gm)

    def first_reproducing(self, gms: list[fx.GraphModule]) -> int | None:
        return next((i for i, gm in enumerate(gms) if self._answer(gm) == REPRODUCES), None)

    def _answer(self, gm: fx.GraphModule) -> str:
        if self.validate is not None and self.validate(gm):
            return INVALID
        self.asked.append(gm)
        return REPRODUCES


def likely_questions(gm: fx.GraphModule, ctx: Context, validate=None,
                     passes: tuple[str, ...] = INPUT_PASSES) -> list[fx.GraphModule]:
    """What `passes`, run in order from `gm`, ask if every answer reproduces (the first LIMIT)."""
    asked: list[fx.GraphModule] = []
    current = gm
    for name in passes:
        optimist = Optimist(validate)
        try:
            kept = BY_NAME[name].fn(current, optimist, replace(ctx, notes=dict(ctx.notes)))
        except Exception:  # a pass that asks something else (outcomes) is not guessed past
            break
        asked += optimist.asked
        current = kept if kept is not None else current
        if len(asked) >= LIMIT:
            break
    return asked[:LIMIT]
