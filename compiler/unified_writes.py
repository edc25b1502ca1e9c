"""Inputs one run wrote with the bits they held and the other run left alone: not a difference.

The oracle counts an input as written when its bits changed or its version counter moved (so
eager's relu_ of values >= 0 is a write, and a compiled run that wrote other values there
differs in value, not in structure). A version counter moves only for writes PyTorch makes: a
user Triton kernel launched eagerly writes through a raw pointer and moves none, while a
compiled copy-back of the same write moves it. Where one run wrote an input with the bits it
held and the other did not write it at all, nothing a user can see tells them apart, so that
input is left out of both sides (and of the fp64 reference) before they are compared.
"""
from __future__ import annotations


def _keys(value) -> set:
    return set(value) if isinstance(value, dict) and "out" in value else {"out"}


def _without(value, drop: set):
    if not drop or not isinstance(value, dict) or "out" not in value:
        return value
    kept = {k: v for k, v in value.items() if k not in drop}
    return kept if set(kept) != {"out"} else kept["out"]


def unified_writes(eager, eager_rewritten: frozenset, actual, actual_rewritten: frozenset, reference=None):
    """(eager, actual, reference) values with each input that only one run wrote, with its own bits, left out."""
    drop = {k for k in eager_rewritten if k not in _keys(actual)} | \
        {k for k in actual_rewritten if k not in _keys(eager)}
    return _without(eager, drop), _without(actual, drop), _without(reference, drop)
