"""The fp64 reference run: every floating value a graph computes is computed in fp64.

Widening the inputs alone leaves in the graph's own dtype what it computes from integer inputs
(`lgamma(int16)` is float32), after an explicit cast (`x.float()`), or in a factory
(`torch.ones(3)`). There the "fp64" reference is eager's own arithmetic again, and a value eager
gets wrong (float32 `gelu(inf)` is NaN) would count against a compiler that gets it right. Under
`Fp64Everywhere` every op's floating result is widened as it is made, so what follows it runs in
fp64; an explicit cast to a narrower dtype still rounds (its result is widened after rounding).
"""
from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

WIDER = {torch.float32: torch.float64, torch.float16: torch.float64, torch.bfloat16: torch.float64,
         torch.complex64: torch.complex128, torch.complex32: torch.complex128}


def _widen(x):
    if isinstance(x, torch.Tensor) and x.dtype in WIDER and x.layout == torch.strided:
        return x.to(WIDER[x.dtype])
    return x


# Uninitialized buffers, made to be written in place or to hold another tensor's storage
# (copying an input with its strides and offset does both): widened, their element size would
# no longer match the storage they are given, and the copy would read the wrong elements.
BUFFERS = {"empty", "empty_strided", "empty_like", "new_empty", "new_empty_strided"}


def _keeps_result(func) -> bool:
    """A view, an in-place or out= op (its result is an existing tensor, which must stay that
    tensor), or an uninitialized buffer."""
    return func.__name__.split(".")[0] in BUFFERS or any(r.alias_info is not None for r in func._schema.returns)


class Fp64Everywhere(TorchDispatchMode):
    """Widens every narrower floating (or complex) tensor an aten op computes to fp64."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        return out if _keeps_result(func) else tree_map(_widen, out)
