"""Hypothesis strategies for the tensors a fuzzed program reads, drawn where compiler bugs live:
shapes with 0- and 1-size dims and lengths around the vector widths (7, 8, 9, 15, 16, 17, 31,
33, 63, 65: a vectorized loop, its tail, its scalar remainder), broadcasting; values inside an
op's domain or at its edges (NaN, +-Inf, +-0.0, denormals, integer min/max, uint8 wrap-around,
ties for arg-reductions); memory layouts (transposed, sliced, offset, expanded, channels_last).
Imports only torch and hypothesis."""
from __future__ import annotations

import math

import torch
from hypothesis import strategies as st

# Shrinking moves toward the front of each list: the plainest layout, small sizes.
LAYOUTS = ("contiguous", "transposed", "sliced", "offset", "expanded", "channels_last")
VALUE_LAYOUTS = tuple(layout for layout in LAYOUTS if layout != "expanded")  # keep every value
SIZES = (1, 2, 3, 7, 8, 9, 16, 17, 15, 31, 33, 63, 65, 4, 5)  # around vector widths (8/16 floats, 32/64 bytes)
MAX_NUMEL = 1024
# value profile -> (low, high) of its ordinary values
PROFILES = {"normal": (-3.0, 3.0), "small_ints": (-4.0, 4.0), "unit": (-1.0, 1.0), "wide": (-1000.0, 1000.0)}
# profiles at the edges, mixed into ordinary values: finite ones always; "special" (NaN, Inf)
# unless the caller asks for finite values only
EDGE_PROFILES = ("ties", "extremes")
NONFINITE_PROFILES = ("special",)


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
    if profile in ("small_ints", "ties") or not dtype.is_floating_point:
        x = x.round()
    if profile == "ties":  # two values only: arg-reductions and sorts meet ties
        ends = torch.tensor([low, high], dtype=torch.float64).round()
        x = ends[(torch.rand(shape, generator=gen) < 0.5).long()]
    if exclude_zero:
        x = torch.where(x == 0, torch.ones_like(x), x)
    x = x.to(dtype)
    if profile in ("extremes", "special"):
        edges = edge_values(dtype, nonfinite=profile == "special")
        edges = inside(edges, domain)
        if exclude_zero:
            edges = edges[edges != 0]
        if edges.numel():
            pick = torch.randint(0, len(edges), shape, generator=gen)
            x = torch.where(torch.rand(shape, generator=gen, dtype=torch.float64) < 0.3, edges[pick], x)
    return x


def edge_values(dtype: torch.dtype, nonfinite: bool) -> torch.Tensor:
    """Values at the edges of `dtype`, in `dtype`: signed zeros, the smallest normal and a
    denormal, and NaN/+-Inf when `nonfinite`; for integers min, max, -1, 0, 1 and the middle
    (uint8: 0, 1, 127, 128, 255, where arithmetic wraps around). Not the largest finite float:
    whether a sum near it overflows depends on the order of evaluation, which a compiler may
    change (that is numerics, and no fp64 reference can judge it for float64)."""
    if dtype == torch.bool:
        return torch.tensor([False, True])
    if not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        values = {info.min, info.max, 0, 1, info.max // 2, info.max // 2 + 1}
        values |= {-1, info.min + 1} if info.min else set()
        return torch.tensor(sorted(values), dtype=dtype)
    info = torch.finfo(dtype)
    values = [0.0, -0.0, info.tiny, -info.tiny, info.tiny / 4, 1.0, -1.0]
    if nonfinite:
        values += [math.nan, math.inf, -math.inf]
    return torch.tensor(values, dtype=torch.float64).to(dtype)


def inside(edges: torch.Tensor, domain=(None, None)) -> torch.Tensor:
    """The edge values inside an op's domain (log: x > 0), and NaN: outside the domain an op's
    formula gives garbage that eager and compiled code may legitimately differ on."""
    low, high = domain
    wide = edges.double()
    keep = torch.ones_like(wide, dtype=torch.bool)
    if low is not None:
        keep &= wide > low
    if high is not None:
        keep &= wide < high
    return edges[keep | wide.isnan()]


def sprinkle(t: torch.Tensor, profile: str, seed: int, domain=(None, None)) -> torch.Tensor:
    """`t` (a sample's own tensor) with some values moved to the edges of its dtype (inside the
    op's domain): OpInfo's samples keep an op's argument rules (shapes, indices), and float
    values may still be special."""
    if profile not in ("extremes", "special") or not t.is_floating_point() or t.numel() == 0:
        return t
    gen = torch.Generator().manual_seed(seed)
    edges = inside(edge_values(t.dtype, nonfinite=profile == "special"), domain)
    if not edges.numel():
        return t
    pick = torch.randint(0, len(edges), t.shape, generator=gen)
    mask = torch.rand(t.shape, generator=gen, dtype=torch.float64) < 0.3
    return torch.where(mask, edges[pick], t)


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
    return tuple(PROFILES) + EDGE_PROFILES + (NONFINITE_PROFILES if allow_nonfinite else ())


@st.composite
def tensors(draw, dtype: torch.dtype, shape: tuple | None = None, domain=(None, None),
            exclude_zero: bool = False, allow_nonfinite: bool = False, layouts: tuple = LAYOUTS):
    """One input tensor: shape, values (within `domain`) and memory layout all drawn."""
    shape = draw(shapes()) if shape is None else shape
    profile = draw(st.sampled_from(profiles(allow_nonfinite)))
    seed = draw(st.integers(0, 2**16 - 1))
    layout = draw(st.sampled_from(layouts))
    return restride(make_values(shape, dtype, profile, seed, domain, exclude_zero), layout)
