"""Blame's one search over a list: the few items whose switch alone makes the failure go away.

Not ddmin (minifier.reduce.delta_core) in disguise, and so not built on it. Where neither half
does it alone, ddmin splits the same set finer (four chunks, then their complements, ...),
while this search (Zeller's 1999 dd, split with a base held fixed) recurses into each half
with the other half held switched: culprits that only work jointly are found in about
k*log2(n) experiments for k culprits, each question a half plus a base that ddmin never asks
(two culprits among eight: 8 questions here, 28 for ddmin, some of them twice). Run as ddmin,
blame would run other experiments in another order: other counts in its report and, where
the answer is not monotone, perhaps other names.
"""
from __future__ import annotations

from typing import Callable


def minimal_set(items: list, fixes: Callable[[list], bool], base: tuple = ()) -> list:
    """A small subset S of `items` with fixes(base + S), given fixes(base + items): split in
    halves, keep a half that fixes it alone, else narrow each half with the other held fixed."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    first, second = items[:half], items[half:]
    if fixes([*base, *first]):
        return minimal_set(first, fixes, base)
    if fixes([*base, *second]):
        return minimal_set(second, fixes, base)
    needed_first = minimal_set(first, fixes, (*base, *second))
    return needed_first + minimal_set(second, fixes, (*base, *needed_first))
