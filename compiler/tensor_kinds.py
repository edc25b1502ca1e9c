"""Tensors of the kinds torch.save or a plain storage copy get wrong, copied and saved as the same kind.

- A ZeroTensor (torch._efficientzerotensor; e.g. the gradient of torch.sgn) has no storage:
  torch.save refuses it and a storage copy fails. It is saved as a marker (a plain dict of its
  size, dtype, device and requires_grad, which `torch.load(weights_only=True)` reads) and rebuilt
  with torch._efficientzerotensor.
- conj and neg bits (x.conj(), torch._neg_view) are flags on a view, not in the storage: a
  storage copy drops them (and so changes the values); the copy sets them again.
- Parameters stay Parameters; requires_grad, strides, zero strides, overlapping views and
  storage offsets are kept by the storage copy itself.
"""
from __future__ import annotations

import torch

MARK = "minify_tensor_kind"  # the key of a marker dict in a saved structure


def is_zero_tensor(x) -> bool:
    return isinstance(x, torch.Tensor) and x._is_zerotensor()


def zero_like(x: torch.Tensor) -> torch.Tensor:
    out = torch._efficientzerotensor(tuple(x.shape), dtype=x.dtype, device=x.device)
    return out.requires_grad_(x.requires_grad) if x.is_leaf and x.requires_grad else out


def copy_tensor(x: torch.Tensor) -> torch.Tensor:
    """An exact copy: same kind, dtype, shape, strides, storage offset, bits, requires_grad."""
    if is_zero_tensor(x):
        return zero_like(x)
    storage = x.detach().untyped_storage().clone()
    out = torch.empty(0, dtype=x.dtype, device=x.device).set_(storage, x.storage_offset(), x.size(), x.stride())
    if x.is_complex() and x.is_conj():
        out = out.conj()  # the bit only: the storage already holds the unconjugated values
    if x.is_neg():
        out = torch._neg_view(out)
    if isinstance(x, torch.nn.Parameter):
        return torch.nn.Parameter(out, requires_grad=x.requires_grad)
    return out.requires_grad_(x.requires_grad) if x.is_leaf and x.requires_grad else out


def savable(value):
    """`value` (tensors, and lists, tuples and dicts of them) with each ZeroTensor as its marker."""
    if is_zero_tensor(value):
        return {MARK: "zero", "size": list(value.shape), "dtype": str(value.dtype).replace("torch.", ""),
                "device": str(value.device), "requires_grad": bool(value.requires_grad)}
    if isinstance(value, (list, tuple)):
        return type(value)(savable(v) for v in value)
    if isinstance(value, dict):
        return {k: savable(v) for k, v in value.items()}
    return value


def restored(value, device=None):
    """What `savable` made, loaded back: each marker rebuilt as its tensor (on `device` if given)."""
    if isinstance(value, dict) and value.get(MARK) == "zero":
        out = torch._efficientzerotensor(tuple(value["size"]), dtype=getattr(torch, value["dtype"]),
                                         device=device or value["device"])
        return out.requires_grad_(value["requires_grad"])
    if isinstance(value, (list, tuple)):
        return type(value)(restored(v, device) for v in value)
    if isinstance(value, dict):
        return {k: restored(v, device) for k, v in value.items()}
    return value


def zero_source(x: torch.Tensor, device: str = "device") -> str:
    """Python source rebuilding ZeroTensor `x` (for make_inputs)."""
    grad = ".requires_grad_()" if x.requires_grad else ""
    return f"torch._efficientzerotensor({tuple(x.shape)}, dtype={x.dtype}, device={device}){grad}"
