"""Exact Python source for small input values, so repro.py can show its inputs inline.

Every literal must rebuild the value bit for bit: floats are written as the shortest decimal
that converts back to the same bits *through the very call repro.py makes*
(`torch.tensor([...], dtype=...)`), checked here rather than assumed; tensors holding a NaN
(whose sign and payload no decimal carries) are written as their integer bit patterns.
"""
from __future__ import annotations

import math

import torch

from compiler.graph_code import complex_literal, float_literal

INLINE_MAX = 16  # tensors whose whole storage has at most this many elements are written inline

FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
INTEGERS = (torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool)
BITS = {torch.float16: torch.int16, torch.bfloat16: torch.int16, torch.float32: torch.int32,
        torch.float64: torch.int64}


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype)  # "torch.float32": valid source


def python_float(x: float) -> str:
    """A Python float literal that evaluates to exactly `x` (repr round-trips in Python)."""
    return float_literal(x)


def scalar_literal(value) -> str:
    """Source for a non-tensor graph input: int (any width), float (inf, nan, -0.0 included),
    bool, complex or None; each evaluates back to the same value, bit for bit (NaN aside)."""
    if isinstance(value, float):
        return python_float(value)
    if isinstance(value, complex):
        return complex_literal(value)
    if value is None or isinstance(value, (bool, int)):
        return repr(value)
    raise TypeError(f"no literal for a {type(value).__name__}")


def _same_bits(value: float, text: str, dtype: torch.dtype) -> bool:
    a = torch.tensor([value], dtype=dtype).view(BITS[dtype])
    b = torch.tensor([float(text)], dtype=dtype).view(BITS[dtype])
    return bool(torch.equal(a, b))


def float_element(value: float, dtype: torch.dtype) -> str:
    """The shortest decimal that torch turns back into the same `dtype` bits as `value`."""
    if math.isinf(value):
        return python_float(value)
    for digits in range(1, 18):
        text = repr(float(f"{value:.{digits}g}"))
        if _same_bits(value, text, dtype):
            return text
    return repr(value)  # the exact double: always converts back to itself


def inlinable(t: torch.Tensor) -> bool:
    """Small enough, and of a kind a literal can carry exactly."""
    if t.layout != torch.strided or t.is_quantized or t.dtype not in FLOATS + INTEGERS:
        return False
    storage = t.untyped_storage()
    return storage.nbytes() % t.element_size() == 0 and storage.nbytes() // t.element_size() <= INLINE_MAX


def storage_flat(t: torch.Tensor) -> torch.Tensor:
    """All elements of t's storage, as a contiguous 1-D tensor of t's dtype (on the CPU)."""
    n = t.untyped_storage().nbytes() // t.element_size()
    flat = torch.empty(0, dtype=t.dtype, device=t.device).set_(t.untyped_storage(), 0, (n,), (1,))
    return flat.detach().cpu().clone()


def values_source(t: torch.Tensor, nested: bool) -> tuple[str, torch.dtype]:
    """(list literal, dtype the literal is built as): `t`'s values, nested by shape or flat.

    Floats holding a NaN come back as integer bits, to be `.view()`ed as the float dtype."""
    t = t.detach().cpu()
    if t.dtype in FLOATS and bool(torch.isnan(t).any()):
        bits = t.contiguous().view(BITS[t.dtype])
        return _format(bits.tolist() if nested else bits.reshape(-1).tolist(), repr), BITS[t.dtype]
    if t.dtype in FLOATS:
        return _format(t.tolist() if nested else t.reshape(-1).tolist(), lambda v: float_element(v, t.dtype)), t.dtype
    return _format(t.tolist() if nested else t.reshape(-1).tolist(), repr), t.dtype


def _format(value, element) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_format(v, element) for v in value) + "]"
    return element(value)


def readable_values(t: torch.Tensor, nested: bool) -> str:
    """t's values for a comment beside its bit patterns (NaN shown as nan)."""
    t = t.detach().cpu()
    values = t.tolist() if nested else t.reshape(-1).tolist()
    return _format(values, lambda v: "nan" if math.isnan(v) else float_element(v, t.dtype))


def tensor_source(values: str, built_as: torch.dtype, dtype: torch.dtype) -> str:
    """`torch.tensor(values, dtype=..., device=device)`, viewed back to `dtype` if built as bits."""
    src = f"torch.tensor({values}, dtype={dtype_name(built_as)}, device=device)"
    return src if built_as == dtype else f"{src}.view({dtype_name(dtype)})"


def constant_element(t: torch.Tensor) -> str | None:
    """Source of the one value every element of t's storage holds (bit for bit), or None: a
    tensor of any size that holds one value is written `torch.zeros(...)` / `torch.full(...)`,
    with no inputs file (which a GitHub issue cannot carry). NaN is left to the file."""
    if t.layout != torch.strided or t.is_quantized or t.dtype not in FLOATS + INTEGERS:
        return None
    flat = storage_flat(t)
    if flat.numel() == 0:
        return None
    bits = flat.view(BITS[t.dtype]) if t.dtype in FLOATS else flat
    if not bool((bits == bits[0]).all()):
        return None
    value = flat[0].item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return float_element(value, t.dtype) if t.dtype in FLOATS else repr(value)


def constant_source(shape: tuple, element: str, dtype: torch.dtype) -> str:
    """`torch.zeros(shape, ...)`, or `torch.full(shape, element, ...)` for another value."""
    if element in ("0", "0.0", "False"):
        return f"torch.zeros({tuple(shape)}, dtype={dtype_name(dtype)}, device=device)"
    return f"torch.full({tuple(shape)}, {element}, dtype={dtype_name(dtype)}, device=device)"
