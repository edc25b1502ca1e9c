"""Simplifications of a candidate's input values, applied where the values live (in workers).

A candidate names each input as (recorded value, transform); the transform turns the real
value into a simpler one. Reduction passes propose transforms; the repro saves the result.
Workers, the parent's validity check (on fake tensors) and the repro writer all go through
`apply_transform`, so the three can never disagree about what an input is.

A transform is a tuple of steps, each `(kind, *args)`, kept in a fixed order (see `ORDER`)
so that the same simplification always has the same spelling (and the same cache key). A
single step on its own, e.g. `("zeros",)`, is accepted too.
"""
from __future__ import annotations

import torch

# The order steps apply in: pointwise ops folded into the value first (they commute with
# everything after), then strides ("contiguous", or "channels_last"), then the block of
# elements kept, then the rank, then the values themselves.
ORDER = ("map", "contiguous", "shape", "view", "value")
VALUE_KINDS = ("zeros", "ones", "ints")  # simplest first
SMALL_INT = 3  # "ints" keeps values in [-3, 3] (or [0, 3] for unsigned types)


def steps(transform) -> tuple:
    """The steps of a transform (None, one step, or a tuple of steps) as a tuple of tuples."""
    if not transform:
        return ()
    if isinstance(transform[0], str):
        return (tuple(transform),)
    return tuple(tuple(s) for s in transform)


def with_step(transform, step: tuple) -> tuple:
    """`transform` with `step` added, replacing any step of the same kind, in canonical order."""
    kept = [s for s in steps(transform) if _group(s[0]) != _group(step[0])]
    return tuple(sorted([*kept, tuple(step)], key=lambda s: ORDER.index(_group(s[0]))))


def step_of(transform, group: str) -> tuple | None:
    return next((s for s in steps(transform) if _group(s[0]) == group), None)


def _group(kind: str) -> str:
    return "value" if kind in VALUE_KINDS else "contiguous" if kind == "channels_last" else kind


def apply_transform(value, transform):
    """The simplified value. Works on real, fake and meta tensors alike."""
    if not isinstance(value, torch.Tensor):
        return value
    for kind, *args in steps(transform):
        value = _STEPS[kind](value, *args)
    return value


def _block(value: torch.Tensor, shape) -> torch.Tensor:
    """The leading block of each dim, with the original's stride order."""
    part = value[tuple(slice(0, n) for n in shape)]
    out = torch.empty_like(part)  # preserve_format keeps a permuted layout permuted
    out.copy_(part)
    return out


def _small_ints(value: torch.Tensor) -> torch.Tensor:
    if value.dtype == torch.bool or value.is_complex():
        return value.clone()
    low = 0 if value.dtype == torch.uint8 else -SMALL_INT
    if value.is_floating_point():
        return value.round().clamp(low, SMALL_INT)
    return value.clamp(low, SMALL_INT)


def _map(value: torch.Tensor, ops) -> torch.Tensor:
    """Apply pointwise ops, in order, to the whole value (see passes/fold_into_input.py). Each
    op is ("method", name, args, kwargs) or ("function", dotted name, args, kwargs), called
    with the value first."""
    for kind, name, args, kwargs in ops:
        fn = getattr(value, name) if kind == "method" else resolve_function(name)
        value = fn(*args, **dict(kwargs)) if kind == "method" else fn(value, *args, **dict(kwargs))
    return value


def resolve_function(dotted: str):
    """`torch.log1p`, `torch.nn.functional.gelu`, `operator.neg`, `torch.ops.aten.abs.default`
    from their dotted names: the longest importable module, then attributes."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            value = getattr(value, name)
        return value
    raise ImportError(f"cannot resolve {dotted!r}")


_STEPS = {
    "map": _map,
    "contiguous": lambda v: v.contiguous(),
    "channels_last": lambda v: v.contiguous(memory_format=channels_last_format(v.dim())),
    "shape": _block,
    "view": lambda v, shape: v.reshape(tuple(shape)).clone(),
    "zeros": torch.zeros_like,
    "ones": torch.ones_like,
    "ints": _small_ints,
}


def channels_last_format(dim: int) -> torch.memory_format:
    """channels_last for a 4-d tensor, channels_last_3d for a 5-d one."""
    return torch.channels_last if dim == 4 else torch.channels_last_3d


def resolve(values: dict, ref):
    """The value an input reference names: `name` or `(name, transform)`."""
    name, transform = (ref, None) if isinstance(ref, str) else ref
    return apply_transform(values[name], transform)


def meta_of(value, transform=None):
    """What the simplified value looks like (shape, strides, dtype) without computing it."""
    if not isinstance(value, torch.Tensor):
        return value
    blank = torch.empty_strided(value.shape, value.stride(), dtype=value.dtype, device="meta")
    return apply_transform(blank, transform)


def value_cost(transform) -> int:
    """How far an input's values are from the simplest: zeros 0, ones 1, small ints 2, real 3."""
    step = step_of(transform, "value")
    return VALUE_KINDS.index(step[0]) if step else len(VALUE_KINDS)
