"""Reduction passes: each a short function named for what it removes.

A pass takes the current graph, the evaluator and the reduction context, and returns a
smaller graph that still reproduces, or None when it found nothing to remove.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Context:
    values: dict  # recorded eager values by node name
    kind: str  # failure kind being reduced
    window: int = 1  # speculative candidates per round (the worker count)
    notes: dict = field(default_factory=dict)  # what passes learned, e.g. the first divergent node
