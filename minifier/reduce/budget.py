"""Limits on a reduction (wall time, compiles) and the evaluator as passes see it under them.

When a limit is reached, the pass in progress is abandoned by an `Exhausted` exception and
the reducer keeps the best candidate seen so far: the smallest that reproduced, even one
found in the middle of a pass.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

import torch.fx as fx

from minifier.workers.evaluate import Evaluator
from minifier.workers.judge import INVALID, REPRODUCES


class Exhausted(Exception):
    """A limit was reached (or the user interrupted): stop reducing, keep the best so far."""


@dataclass
class Budget:
    deadline: float | None = None  # time.monotonic() value
    max_compiles: int | None = None  # compiles spent by reduction passes, over all bugs
    spent: int = 0
    stopped: str | None = None  # why reduction stopped early: max-time, max-compiles, interrupted

    def left(self) -> float:
        return math.inf if self.max_compiles is None else self.max_compiles - self.spent

    def out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def check(self) -> None:
        if self.stopped is None:
            if self.deadline is not None and time.monotonic() > self.deadline:
                self.stopped = "max-time"
            elif self.left() <= 0:
                self.stopped = "max-compiles"
        if self.stopped is not None:
            raise Exhausted(self.stopped)


class Guarded:
    """Wraps an Evaluator: charges compiles to the budget, stops when it runs out, and keeps
    the best (lowest-score) reproducing candidate it has seen.

    Passes see only the methods defined here (`outcomes`, `test`, `test_many`,
    `first_reproducing`), each checked against the budget and charged for what it compiles.
    Anything else a pass asks for fails at once: an evaluator method forwarded unguarded would
    spend compiles no budget sees, so a new one is added here, with its accounting, or not used
    by passes."""

    def __init__(self, ev: Evaluator, budget: Budget, score: Callable[[fx.GraphModule], tuple],
                 start: fx.GraphModule):
        self.ev, self.budget, self.score = ev, budget, score
        self.best, self.best_score = start, score(start)

    def __getattr__(self, name):
        raise AttributeError(f"Guarded evaluator has no {name!r}: reduction passes may use only outcomes, test, "
                             f"test_many and first_reproducing (each charged to the budget); add {name!r} to "
                             "Guarded with its accounting to use it")

    def outcomes(self, gms: list[fx.GraphModule], stage: str | None = None) -> list[dict]:
        if 1 < len(gms) and self.budget.left() < len(gms):
            return [self.outcomes([gm], stage)[0] for gm in gms]
        self.budget.check()
        before = self.ev.compiles
        try:
            return self.ev.outcomes(gms, stage)
        finally:
            self.budget.spent += self.ev.compiles - before

    def test(self, gm: fx.GraphModule) -> str:
        return self.test_many([gm])[0]

    def first_reproducing(self, gms: list[fx.GraphModule]) -> int | None:
        """Index of the first of `gms` that reproduces, without waiting for those after it
        (Evaluator.first_reproducing); one at a time near the end of the budget."""
        if self.budget.left() < len(gms):
            return next((i for i, v in enumerate(self.test_many(gms)) if v == REPRODUCES), None)
        self.budget.check()
        before = self.ev.compiles
        try:
            hit = self.ev.first_reproducing(gms)
        finally:
            self.budget.spent += self.ev.compiles - before
        if hit is not None and (s := self.score(gms[hit])) < self.best_score:
            self.best, self.best_score = gms[hit], s
        return hit

    def test_many(self, gms: list[fx.GraphModule]) -> list[str]:
        """Verdicts in order. Near the end of the budget, candidates go one at a time and the
        rest of the batch is skipped after the first that reproduces (callers take the first)."""
        if self.budget.left() >= len(gms):
            verdicts = [self.ev.verdict(a, gm) for a, gm in zip(self.outcomes(gms), gms)]
        else:
            verdicts = []
            for gm in gms:
                verdicts.append(self.ev.verdict(self.outcomes([gm])[0], gm) if REPRODUCES not in verdicts else INVALID)
        for gm, verdict in zip(gms, verdicts):
            if verdict == REPRODUCES and (s := self.score(gm)) < self.best_score:
                self.best, self.best_score = gm, s
        return verdicts
