"""Blame's one search over a list: the few items whose switch alone makes the failure go away."""
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
