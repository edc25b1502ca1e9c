"""Simplifications of a candidate's input values, applied where the values live (in workers).

A candidate names each input as (recorded value, transform); the transform turns the real
value into a simpler one. Reduction passes propose transforms; the repro saves the result.
"""
from __future__ import annotations

import torch


def apply_transform(value, transform):
    if transform is None or not isinstance(value, torch.Tensor):
        return value
    kind, *args = transform
    if kind == "contiguous":
        return value.contiguous()
    if kind == "zeros":
        return torch.zeros_like(value)
    if kind == "ones":
        return torch.ones_like(value)
    if kind == "shape":  # keep the leading block of each dim
        (shape,) = args
        return value[tuple(slice(0, n) for n in shape)].clone()
    raise ValueError(f"unknown input transform {kind!r}")
