"""Hypothesis strategies for the tensors a fuzzed program reads: small shapes (0- and 1-size dims,
broadcasting), values kept inside an op's domain and out of NaN/Inf unless asked, and memory
layouts (transposed, sliced, offset, expanded, channels_last). Imports only torch and hypothesis."""
from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

# Shrinking moves toward the front of each list: the plainest layout, small sizes.
LAYOUTS = ("contiguous", "transposed", "sliced", "offset", "expanded", "channels_last")
VALUE_LAYOUTS = tuple(layout for layout in LAYOUTS if layout != "expanded")  # keep every value
SIZES = (1, 2, 3, 4, 5, 8, 7, 16, 17)
MAX_NUMEL = 1024
# value profile -> (low, high); "special" (NaN, Inf, signed zeros) only when asked for
PROFILES = {"normal": (-3.0, 3.0), "small_ints": (-4.0, 4.0), "unit": (-1.0, 1.0), "wide": (-1000.0, 1000.0)}


@st.composite
def shapes(draw, min_dims: int = 0, max_dims: int = 4, max_numel: int = MAX_NUMEL, allow_empty: bool = True):
    """Small shapes; now and then one dim is 0."""
    ndim = draw(st.integers(min_dims, max_dims))
    sizes, budget = [], max_numel
    for _ in range(ndim):
        size = draw(st.sampled_from([s for s in SIZES if s <= budget] or [1]))
        sizes.append(size)
        budget = max(1, budget // size)
    if allow_empty and ndim and draw(st.sampled_from((False,) * 11 + (True,))):
        sizes[draw(st.integers(0, ndim - 1))] = 0
    return tuple(sizes)


@st.composite
def broadcast_shapes(draw, shape: tuple):
    """A shape that broadcasts with `shape`: the same, a suffix with some dims set to 1, or
    one with an extra leading dim (so `shape` is the one that broadcasts)."""
    how = draw(st.sampled_from(("same", "smaller", "larger")))
    if how == "same":
        return shape
    if how == "larger":
        return (draw(st.sampled_from((2, 3))),) + tuple(3 if s == 1 else s for s in shape)
    drop = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else s for s in shape[drop:])


def value_range(dtype: torch.dtype, profile: str, domain=(None, None)) -> tuple[float, float]:
    """Where drawn values lie: the profile's range, inside the dtype's and the op's domain."""
    low, high = PROFILES.get(profile, PROFILES["normal"])
    if dtype == torch.bool:
        return 0, 1
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        low, high = max(low, info.min), min(high, info.max)
    lo_dom, hi_dom = domain
    margin = 0.01 if dtype.is_floating_point else 1
    if lo_dom is not None:
        low = max(low, lo_dom + margin)
    if hi_dom is not None:
        high = min(high, hi_dom - margin)
    if low > high:  # the profile misses the domain: use the domain near its edge
        low = high = (lo_dom + margin) if lo_dom is not None else (hi_dom - margin)
    return low, high


def make_values(shape: tuple, dtype: torch.dtype, profile: str, seed: int, domain=(None, None),
                exclude_zero: bool = False) -> torch.Tensor:
    """A contiguous tensor of values drawn from a seeded generator (reproducible from the draw)."""
    gen = torch.Generator().manual_seed(seed)
    low, high = value_range(dtype, profile, domain)
    x = torch.rand(shape, generator=gen, dtype=torch.float64) * (high - low) + low
    if profile == "small_ints" or not dtype.is_floating_point:
        x = x.round()
    if profile == "special" and dtype.is_floating_point:
        specials = torch.tensor([math.nan, math.inf, -math.inf, 0.0, -0.0], dtype=torch.float64)
        pick = torch.randint(0, 5, shape, generator=gen)
        x = torch.where(torch.rand(shape, generator=gen) < 0.25, specials[pick], x)
    if exclude_zero:
        x = torch.where(x == 0, torch.ones_like(x), x)
    return x.to(dtype)


def restride(t: torch.Tensor, layout: str) -> torch.Tensor:
    """Same shape and (except `expanded`) same values in another memory layout."""
    if layout == "transposed" and t.dim() >= 2:
        order = list(range(t.dim()))[::-1]
        return t.permute(order).contiguous().permute(order)
    if layout == "sliced" and t.dim() >= 1:
        big = torch.zeros(*t.shape[:-1], 2 * t.shape[-1], dtype=t.dtype)
        big[..., ::2] = t
        return big[..., ::2]
    if layout == "offset":
        flat = torch.zeros(t.numel() + 1, dtype=t.dtype)
        flat[1:] = t.reshape(-1)
        return flat[1:].view(t.shape)
    if layout == "expanded":
        dims = [d for d, s in enumerate(t.shape) if s > 1]
        return t.narrow(dims[0], 0, 1).expand(t.shape) if dims else t
    if layout == "channels_last" and t.dim() in (4, 5):
        fmt = torch.channels_last if t.dim() == 4 else torch.channels_last_3d
        return t.contiguous(memory_format=fmt)
    return t.contiguous()


def profiles(allow_nonfinite: bool) -> tuple[str, ...]:
    return tuple(PROFILES) + (("special",) if allow_nonfinite else ())


@st.composite
def tensors(draw, dtype: torch.dtype, shape: tuple | None = None, domain=(None, None),
            exclude_zero: bool = False, allow_nonfinite: bool = False, layouts: tuple = LAYOUTS):
    """One input tensor: shape, values (within `domain`) and memory layout all drawn."""
    shape = draw(shapes()) if shape is None else shape
    profile = draw(st.sampled_from(profiles(allow_nonfinite)))
    seed = draw(st.integers(0, 2**16 - 1))
    layout = draw(st.sampled_from(layouts))
    return restride(make_values(shape, dtype, profile, seed, domain, exclude_zero), layout)
