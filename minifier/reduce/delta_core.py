"""The one delta-debugging core, over a predicate: graphs, programs and the graph-subset search use it.

A search hands its candidates to a `Tester`: a function that answers a batch of candidates
with the index of the first one, in order, that holds (None if none does). It may check them
one at a time, all at once on a worker pool (the Evaluator), or side by side on threads (a
program's runs); the search takes the first that holds in order, so a batch of N finds what
N batches of one find (C-Vise's rule: parallel tries, accepted in order). Only the tries
past the one taken differ with the window: their cost, never the answer.
"""
from __future__ import annotations

from concurrent.futures import Executor
from dataclasses import dataclass
from itertools import islice
from typing import Callable, Generic, Iterable, Sequence, TypeVar

C = TypeVar("C")
T = TypeVar("T")
Tester = Callable[[list], "int | None"]  # a batch of candidates -> index of the first that holds, or None


def one_at_a_time(holds: Callable[[C], bool]) -> Tester:
    """A tester that asks `holds` about each candidate in order and stops at the first that holds."""
    return lambda batch: next((i for i, c in enumerate(batch) if holds(c)), None)


def side_by_side(holds: Callable[[C], bool], pool: Executor) -> Tester:
    """A tester that asks `holds` about the whole batch at once on `pool`; the first that holds in
    order wins (the later ones still run to their end: their answers are cached by `holds`)."""
    return lambda batch: next((i for i, ok in enumerate(pool.map(holds, batch)) if ok), None)


@dataclass
class Found(Generic[C]):
    index: int | None  # of the first candidate that holds, in the order given; None if none does
    candidate: C | None
    tried: int  # how many candidates went to the tester (whole windows)


def first_in_order(candidates: Iterable[C], tester: Tester, window: int) -> Found[C]:
    """The first candidate, in order, that holds, handing the tester `window` at a time. The
    candidates are drawn lazily: none past the window that holds the answer is built."""
    drawn, tried = iter(candidates), 0
    while batch := list(islice(drawn, max(window, 1))):
        hit = tester(batch)
        tried += len(batch)
        if hit is not None:
            return Found(tried - len(batch) + hit, batch[hit], tried)
    return Found(None, None, tried)


def ddmin(items: Sequence[T], tester: Tester, window: int = 1, empty_first: bool = False) -> list[T]:
    """A 1-minimal subset of `items` that holds (all of `items` is taken to): removing any single
    remaining item loses it. Each round tries the chunks, then (past two) their complements, in
    that order, and takes the first that holds: a chunk starts over at two chunks, a complement
    keeps the granularity less one; when none holds the chunks get twice as fine.

    `empty_first` tries the empty subset before anything else (alone, in a window of its own):
    passes that simplify each item then cost one check when everything can go at once."""
    items = list(items)
    if empty_first and items and first_in_order([[]], tester, 1).index is not None:
        return []
    n = 2
    while len(items) >= 2:
        n = min(n, len(items))
        chunks = [items[i * len(items) // n:(i + 1) * len(items) // n] for i in range(n)]
        complements = [[x for x in items if x not in c] for c in chunks]
        trials = chunks + complements if n > 2 else chunks
        found = first_in_order(trials, tester, window)
        if found.index is not None:
            items = found.candidate
            n = 2 if found.index < len(chunks) else max(n - 1, 2)
            continue
        if n == len(items):
            break
        n = min(2 * n, len(items))
    return items


def shortest_failing_prefix(lo: int, hi: int, first_failing: Tester, splits: int = 1) -> int:
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
