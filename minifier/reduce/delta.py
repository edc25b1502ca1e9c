"""The one delta-debugging core every list-shaped pass plugs into.

A pass hands over its targets in a stable order and a function that builds the candidate
keeping only a subset of them; the core decides which subsets to try (ddmin: chunks, then
complements, then finer chunks) and returns a 1-minimal subset: removing any single
remaining target loses the bug. Candidates of one round are checked in speculative windows
as wide as the worker pool, and the first reproducing one in order wins, so `-j N` finds
exactly what `-j 1` finds.
"""
from __future__ import annotations

from typing import Callable, Sequence, TypeVar

from minifier.workers.evaluate import Evaluator
from minifier.workers.judge import REPRODUCES

T = TypeVar("T")


def first_reproducing(ev: Evaluator, build: Callable, subsets: list, window: int) -> int | None:
    """Index of the first subset whose candidate reproduces (None if none does)."""
    for start in range(0, len(subsets), window):
        chunk = subsets[start:start + window]
        graphs = [build(s) for s in chunk]
        usable = [(i, g) for i, g in enumerate(graphs) if g is not None]
        hit = ev.first_reproducing([g for _, g in usable]) if usable else None
        if hit is not None:
            return start + usable[hit][0]
    return None


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


def shortest_failing_prefix(lo: int, hi: int, first_failing: Callable[[list[int]], int | None],
                            splits: int = 1) -> int:
    """The smallest n in [lo, hi] whose prefix fails, given that prefix `hi` does (failing is
    taken to be monotone: a prefix that holds the culprit fails). Each round asks about
    `splits` points dividing the range evenly, shortest first: `first_failing(points)` is the
    index of the first failing one, or None. splits=1 is a binary search; splits=2 checks two
    prefixes side by side (log3 rounds); splits=hi-lo scans every prefix in order. The points
    never depend on how they are checked, so the answer does not either."""
    while lo < hi:
        points = sorted({lo + (hi - lo) * i // (splits + 1) for i in range(1, splits + 1)})
        hit = first_failing(points)
        if hit is None:
            lo = points[-1] + 1
        else:
            hi = points[hit]
            lo = points[hit - 1] + 1 if hit > 0 else lo
    return hi


def ddmin(ev: Evaluator, items: Sequence[T], build: Callable[[list[T]], object], window: int = 1) -> list[T]:
    """Smallest subset of `items` (1-minimal) whose candidate `build(subset)` still reproduces.

    `build` returns None for a subset that makes no valid candidate; it is skipped uncompiled.
    The empty subset is tried first: passes that simplify each target (shrink every input,
    zero every value) then cost one compile when everything can go at once.
    """
    items = list(items)
    if items and first_reproducing(ev, build, [[]], 1) is not None:
        return []
    n = 2
    while len(items) >= 2:
        n = min(n, len(items))
        chunks = [items[i * len(items) // n:(i + 1) * len(items) // n] for i in range(n)]
        complements = [[x for x in items if x not in c] for c in chunks]
        trials = chunks + complements if n > 2 else chunks
        hit = first_reproducing(ev, build, trials, window)
        if hit is not None:
            items = trials[hit]
            n = 2 if hit < len(chunks) else max(n - 1, 2)
            continue
        if n == len(items):
            break
        n = min(2 * n, len(items))
    return items
