"""The delta core (minifier.reduce.delta_core) driven by the Evaluator, for a graph's passes.

A pass hands over its targets in a stable order and a function that builds the candidate
keeping only a subset of them; `ddmin` returns a 1-minimal subset: removing any single
remaining target loses the bug. Candidates of one round are checked in speculative windows
as wide as the worker pool, and the first reproducing one in order wins, so `-j N` finds
exactly what `-j 1` finds. `bisect_down` is the search over one size.
"""
from __future__ import annotations

from typing import Callable, Sequence, TypeVar

from minifier.reduce import delta_core
from minifier.reduce.delta_core import Tester
from minifier.workers.evaluate import Evaluator
from minifier.workers.judge import REPRODUCES

T = TypeVar("T")


def reproducing(ev: Evaluator, build: Callable) -> Tester:
    """The tester of a batch of subsets: each built into its candidate (None: no valid candidate,
    skipped uncompiled), those built all sent to the workers at once, the first reproducing in order."""
    def first(subsets: list) -> int | None:
        graphs = [build(s) for s in subsets]
        usable = [(i, g) for i, g in enumerate(graphs) if g is not None]
        hit = ev.first_reproducing([g for _, g in usable]) if usable else None
        return None if hit is None else usable[hit][0]
    return first


def first_reproducing(ev: Evaluator, build: Callable, subsets: list, window: int) -> int | None:
    """Index of the first subset whose candidate reproduces (None if none does)."""
    return delta_core.first_in_order(subsets, reproducing(ev, build), window).index


def bisect_down(ev: Evaluator, shrink: Callable, start, lo: int, hi: int, window: int) -> tuple[int, object]:
    """The smallest n in (lo, hi] whose candidate reproduces, and that candidate, bisecting down
    from `start` (hi's candidate, which reproduces; lo's does not; taken as monotone). Each step
    shrinks the last candidate kept: `shrink(candidate, at, n)` turns the one at size `at` into
    the one at n. With three workers or more, each round checks the middle and both middles the
    next step could ask for side by side: two steps a round, the same answer as one at a time.

    Where the first middle loses the bug, hi - 1 is asked too (beside it, with two workers or
    more): if it loses the bug as well, no size below does (the same monotone reading), so a
    size that must stay exactly as it is (an alignment, a padding, a vector width) ends after
    one round instead of log2(hi) steps."""
    best, first = start, True
    while hi - lo > 1:
        mid = (lo + hi) // 2
        tries = {mid: shrink(best, hi, mid)}
        below = hi - 1 if first and hi - 1 > mid else None
        if below is not None and window >= 2:
            tries[below] = shrink(best, hi, below)
        if window >= 3:
            if lo < (n := (lo + mid) // 2) < mid:
                tries[n] = shrink(tries[mid], mid, n)  # next, if mid reproduces
            if mid < (n := (mid + hi) // 2) < hi:
                tries[n] = shrink(best, hi, n)  # next, if it does not
        seen = _verdicts(ev, tries)
        if below is not None and not seen.get(mid):
            if below not in tries:  # one at a time: asked only now that mid lost the bug
                tries[below] = shrink(best, hi, below)
                seen.update(_verdicts(ev, {below: tries[below]}))
            if seen.get(below) is False:
                return hi, best
        first = False
        lo, hi, best = (lo, mid, tries[mid]) if seen.get(mid) else (mid, hi, best)
        if (step := (lo + hi) // 2) in tries and hi - lo > 1:  # the next step, answered already
            lo, hi, best = (lo, step, tries[step]) if seen.get(step) else (step, hi, best)
    return hi, best


def _verdicts(ev: Evaluator, tries: dict) -> dict:
    """n -> whether its candidate reproduces, for the candidates that could be built."""
    usable = [n for n in tries if tries[n] is not None]
    verdicts = ev.test_many([tries[n] for n in usable]) if usable else []
    return {n: verdict == REPRODUCES for n, verdict in zip(usable, verdicts)}


def ddmin(ev: Evaluator, items: Sequence[T], build: Callable[[list[T]], object], window: int = 1) -> list[T]:
    """Smallest subset of `items` (1-minimal) whose candidate `build(subset)` still reproduces.

    `build` returns None for a subset that makes no valid candidate; it is skipped uncompiled.
    The empty subset is tried first: passes that simplify each target (shrink every input,
    zero every value) then cost one compile when everything can go at once.
    """
    return delta_core.ddmin(items, reproducing(ev, build), window, empty_first=True)
