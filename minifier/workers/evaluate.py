"""Is this candidate still the same bug? An Asker that judges its answers with a Judge.

Every question about a candidate graph goes through `Evaluator.test`: the Asker
(minifier.workers.ask) gets the worker's Answer, the Judge (minifier.workers.judge) says whether
it is `reproduces` (same signature as the original failure), `passes` or `invalid`. An
evaluator is made for one question; `for_bug` makes the one for another, sharing the pool, the
answer cache and the counters. Code that only asks takes an Asker; code that only judges, a Judge.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch.fx as fx

from minifier.workers.answer import Answer
from minifier.workers.ask import Asker, Question
from minifier.workers.judge import REPRODUCES, Judge


@dataclass(frozen=True)
class Evaluator(Asker):
    """Asks one question: is a candidate the failure with `signature` at `stage` (and, for
    accuracy, with `culprit` still in the graph)? Another question is another evaluator
    (`for_bug`), sharing this one's pool, answer cache and counters."""

    signature: str = field(kw_only=True)
    culprit: str | None = field(default=None, kw_only=True)  # accuracy: the first divergent node stays in the graph

    @property
    def judge(self) -> Judge:
        """How this evaluator's answers are judged."""
        return Judge(self.signature, self.culprit)

    def for_bug(self, stage: str, signature: str, culprit: str | None = None, **limits) -> Evaluator:
        """An evaluator for another question (this stage, signature and culprit) about the same
        graph: same pool, same answer cache, same counters. `limits` may set `timeout` (a run
        longer is a hang) and `validate` (candidates checked before any worker sees them);
        otherwise they are this evaluator's."""
        unknown = set(limits) - {"timeout", "validate"}
        if unknown:
            raise TypeError(f"for_bug() sets stage, signature, culprit, timeout and validate, not {sorted(unknown)}")
        return replace(self, stage=stage, signature=signature, culprit=culprit, **limits)

    @property
    def ignore(self) -> tuple:
        """The rungs of the oracle's ladder this evaluator does not check (its judging's)."""
        return self.judging.ignore

    def verdict(self, wire: dict | Answer, gm: fx.GraphModule | None = None) -> str:
        return self.judge.verdict(wire, gm)

    def test(self, gm: fx.GraphModule) -> str:
        return self.verdict(self.outcomes([gm])[0], gm)

    def test_many(self, gms: list[fx.GraphModule]) -> list[str]:
        return [self.verdict(a, gm) for a, gm in zip(self.outcomes(gms), gms)]

    def first_reproducing(self, gms: list[fx.GraphModule]) -> int | None:
        """Index of the first of `gms` that reproduces, all sent to the workers at once. It is
        known once every one before it has answered, so those after it are not waited for: a
        slow one (a prefix that builds many kernels) no longer holds up the search; they finish
        on their workers and their answers fill the cache."""
        keys = self._submit(self._jobs([Question(gm) for gm in gms]))
        for i, gm in enumerate(gms):
            if self.judge.verdict(self._answers([Question(gm)])[0], gm) == REPRODUCES:
                for key in keys[i + 1:]:
                    self._record_when_done(key)
                return i
        return None
