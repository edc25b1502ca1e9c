"""Saved inputs: real values, loadable without unpickling arbitrary objects.

Everything goes through torch.save and is read back with `weights_only=True`, which only
rebuilds tensors and plain Python values. Strides, storage offsets and requires_grad of
leaf tensors survive the round trip.
"""
from __future__ import annotations

from pathlib import Path

import torch

ALLOWED = (torch.Tensor, int, float, bool, type(None))


def save_inputs(values: list, path: Path) -> None:
    for v in values:
        if not isinstance(v, ALLOWED):
            raise TypeError(f"cannot save an input of type {type(v).__name__}")
    torch.save(list(values), path)


def load_inputs(path: Path) -> list:
    return torch.load(path, weights_only=True)
