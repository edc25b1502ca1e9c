"""Hypothesis strategies for small programs of one to a few aten ops, for fuzzing Inductor.

`programs(ops=..., dtypes=...)` draws a `Program`: a few steps, each an op from PyTorch's
OpInfo database (`op_db`) called on drawn tensors (shapes with 0- and 1-size dims and
broadcasting, dtypes, transposed/sliced/offset/channels_last/expanded layouts, values kept
out of NaN/Inf domains unless asked) or on the output of an earlier step, so several ops
land in one compiled graph and Inductor gets to fuse them. Every step is run eagerly while
it is drawn: a draw that eager rejects, or that yields NaN/Inf, is thrown away at once
instead of costing a compile.

What OpInfo knows is used rather than re-stated: which ops exist and what they call, their
supported dtypes, unary domains (`log` wants x > 0), binary rhs rules (`div` excludes zero),
reduction extra arguments, per-variant keyword arguments (`div(rounding_mode=...)`), and,
for every other op, its own `sample_inputs` (valid shapes, indices and arguments).

The module imports only torch and hypothesis, so users' own tests can import it.
"""
from __future__ import annotations

import functools
import hashlib
import math
import random
import sys
import types
import unittest
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import torch
from hypothesis import reject
from hypothesis import strategies as st

FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
# Shrinking moves toward the front of each list: float32, the plainest layout, small sizes.
DEFAULT_DTYPES = (*FLOAT_DTYPES, *INT_DTYPES, torch.bool)
LAYOUTS = ("contiguous", "transposed", "sliced", "offset", "expanded", "channels_last")
VALUE_LAYOUTS = tuple(layout for layout in LAYOUTS if layout != "expanded")  # keep every value
SIZES = (1, 2, 3, 4, 5, 8, 7, 16, 17)
MAX_NUMEL = 1024
MAX_SAMPLE_NUMEL = 4096
# value profile -> (low, high); "special" (NaN, Inf, signed zeros) only when asked for
PROFILES = {"normal": (-3.0, 3.0), "small_ints": (-4.0, 4.0), "unit": (-1.0, 1.0), "wide": (-1000.0, 1000.0)}
SCALARS = {"float": (2.0, -1.0, 0.5, 3, -2, 0.0, 1e-3, 100.0), "int": (2, -1, 3, 0, -2, 7), "bool": (True, False)}

# Ops left out: random or uninitialized results, data-dependent output shapes, results
# that depend on tie-breaking or on the order of duplicate writes, in-place variants, and
# linear algebra / spectral ops that Inductor hands to external libraries.
EXCLUDED = {
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "normal", "uniform", "multinomial",
    "rand_like", "randn_like", "randint_like", "randint", "randn", "nn.functional.dropout",
    "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout", "nn.functional.rrelu", "nn.functional.fractional_max_pool2d",
    "nn.functional.fractional_max_pool3d", "empty_like", "empty", "empty_permuted", "empty_strided",
    "new_empty", "new_empty_strided", "nonzero", "nonzero_static", "argwhere", "masked_select", "unique",
    "unique_consecutive", "histogramdd", "histogram", "histc", "bincount", "sort", "argsort", "msort", "topk",
    "kthvalue", "mode", "median", "nanmedian", "quantile", "nanquantile", "index_put", "put",
    "_unsafe_masked_index_put_accumulate", "index_reduce", "scatter", "scatter_reduce", "masked_scatter",
    "index_copy", "istft", "stft", "item", "equal", "allclose", "as_strided", "as_strided_copy",
    "as_strided_scatter", "resize_", "resize_as_", "zero_", "svd", "qr", "pinverse", "logdet", "matrix_exp",
    "lu_solve", "cholesky", "gradient", "frexp", "bmm", "nn.functional.max_unpool2d",
    "nn.functional.max_unpool3d", "grid_sampler_2d", "triu_indices", "tril_indices",
}
EXCLUDED_PREFIXES = ("linalg.", "fft.", "sparse.", "jiterator", "torch.ops.")
KEEP = {"linalg.vector_norm"}  # decomposed into plain reductions by Inductor
# OpInfo ops whose `op` is a lambda: (torch callable, order of [input, *args] in the call).
CALL_TEMPLATES = {"where": ("torch.where", (1, 0, 2))}
NO_KEEPDIM = {"count_nonzero"}


# --------------------------------------------------------------------------- op catalog

def _expecttest_stub() -> None:
    """op_db's module imports `expecttest` (PyTorch's dev-only test dependency) for one base
    class; without it installed, a stand-in keeps the import working."""
    try:
        import expecttest  # noqa: F401
    except ImportError:
        stub = types.ModuleType("expecttest")
        stub.TestCase = unittest.TestCase
        sys.modules["expecttest"] = stub


@functools.lru_cache(maxsize=None)
def op_db() -> tuple:
    """PyTorch's OpInfo database (importing it takes a few seconds, so once per process).

    Its import loads a hypothesis settings profile of PyTorch's own ("dev": no example
    database, 10 examples); the profile that was active before is put back."""
    from hypothesis import settings

    _expecttest_stub()
    profile = getattr(settings, "_current_profile", None) or "default"
    from torch.testing._internal.common_methods_invocations import op_db as db

    settings.load_profile(profile)
    return tuple(db)


@dataclass(frozen=True)
class OpEntry:
    """One fuzzable op: its OpInfo, how drawn arguments are built (`family`), and how it is called."""

    name: str  # OpInfo name, plus ".variant" for a variant: "div.trunc_rounding"
    info: Any = field(repr=False, compare=False)
    family: str  # unary | binary | reduction | pointwise | sampled
    call: str  # the callable as source: "torch.nn.functional.gelu"
    order: tuple[int, ...] | None = None  # positional argument order, for CALL_TEMPLATES

    def fn(self) -> Callable:
        return _resolve(self.call)

    def dtypes(self, allowed: tuple, device_type: str = "cpu") -> list:
        supported = self.info.supported_dtypes(device_type)
        return [d for d in allowed if d in supported]


def _resolve(dotted: str):
    obj: Any = torch
    for part in dotted.split(".")[1:]:
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _aten_overloads(info) -> list:
    packet = getattr(torch.ops.aten, info.aten_name or info.name.split(".")[-1], None)
    if packet is None or not hasattr(packet, "overloads"):
        return []
    return [getattr(packet, name) for name in packet.overloads()]


def _inductor_lowers(info) -> bool:
    """Inductor generates code for the op (a lowering that is not a fallback, or a decomposition)."""
    from torch._inductor.decomposition import select_decomp_table
    from torch._inductor.lowering import fallbacks, lowerings

    decomps = select_decomp_table()
    return any((o in lowerings and o not in fallbacks) or o in decomps for o in _aten_overloads(info))


def _family(info) -> str:
    from torch.testing._internal.opinfo.core import BinaryUfuncInfo, ReductionOpInfo, UnaryUfuncInfo

    if isinstance(info, UnaryUfuncInfo):
        return "unary"
    if isinstance(info, BinaryUfuncInfo):
        return "binary"
    if isinstance(info, ReductionOpInfo):
        return "reduction"
    default = next((o for o in _aten_overloads(info) if o._overloadname == "default"), None)
    if default is not None and torch.Tag.pointwise in default.tags and _one_tensor_samples(info):
        return "pointwise"  # one tensor plus scalar arguments: our tensors, OpInfo's arguments
    return "sampled"


def _one_tensor_samples(info) -> bool:
    try:
        sample = next(iter(info.sample_inputs("cpu", torch.float32)))
    except Exception:
        return False
    rest = list(sample.args) + list(sample.kwargs.values())
    return isinstance(sample.input, torch.Tensor) and not any(isinstance(a, torch.Tensor) for a in rest)


def _entry(info) -> OpEntry | None:
    name = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
    if (info.name in EXCLUDED or (info.name.startswith(EXCLUDED_PREFIXES) and info.name not in KEEP)
            or info.has_nondeterministic_output or info.is_factory_function or info.name.endswith("_")):
        return None
    if info.name in CALL_TEMPLATES:
        call, order = CALL_TEMPLATES[info.name]
    elif _resolve(f"torch.{info.name}") is info.op:
        call, order = f"torch.{info.name}", None
    else:
        return None
    if not _inductor_lowers(info):
        return None
    return OpEntry(name, info, _family(info), call, order)


@functools.lru_cache(maxsize=None)
def catalog() -> dict[str, OpEntry]:
    """Every op the strategies can draw, by name: OpInfo ops that Inductor lowers or decomposes."""
    entries = (_entry(info) for info in op_db())
    return {e.name: e for e in entries if e is not None}


def resolve_ops(names=None) -> list[OpEntry]:
    """Entries for `names` (all when None). A name may also be the last part of a dotted name
    ("gelu" for nn.functional.gelu) or an op with all its variants ("div")."""
    table = catalog()
    if not names:
        return list(table.values())
    out: list[OpEntry] = []
    for name in names:
        found = ([table[name]] if name in table else
                 [e for e in table.values() if e.info.name == name or e.info.name.split(".")[-1] == name])
        if not found:
            raise KeyError(f"no fuzzable op named {name!r} (see `minify fuzz --list-ops`)")
        out += [e for e in found if e not in out]
    return out


def parse_dtypes(names) -> tuple:
    """("float32", "int64") -> torch dtypes, in DEFAULT_DTYPES order."""
    if not names:
        return DEFAULT_DTYPES
    wanted = set()
    for name in names:
        dtype = getattr(torch, name, None)
        if not isinstance(dtype, torch.dtype):
            raise KeyError(f"unknown dtype {name!r}")
        wanted.add(dtype)
    return tuple(d for d in DEFAULT_DTYPES if d in wanted) + tuple(d for d in wanted if d not in DEFAULT_DTYPES)


# --------------------------------------------------------------------------- programs

@dataclass(frozen=True)
class Ref:
    """A tensor argument: a program input (x0, x1, ...) or an earlier step's output (v0, ...)."""

    name: str


@dataclass
class Step:
    op: str
    call: str
    args: list  # positional arguments in call order: Refs and literals
    kwargs: dict
    output: str

    def source(self) -> str:
        parts = [literal(a) for a in self.args] + [f"{k}={literal(v)}" for k, v in self.kwargs.items()]
        return f"{self.output} = {self.call}({', '.join(parts)})"


@dataclass
class Program:
    """A few op calls on saved input tensors; returns every step's output so a wrong value
    points at the step that first computes it."""

    inputs: dict[str, torch.Tensor]
    steps: list[Step]

    def ops(self) -> list[str]:
        return [s.op for s in self.steps]

    def body(self) -> list[str]:
        outs = ", ".join(s.output for s in self.steps)
        return [s.source() for s in self.steps] + [f"return ({outs}{',' if len(self.steps) == 1 else ''})"]

    def function_source(self, name: str = "program") -> str:
        lines = [f"def {name}({', '.join(self.inputs)}):"] + [f"    {line}" for line in self.body()]
        return "\n".join(lines) + "\n"

    def module_source(self) -> str:
        """`class Repro(torch.nn.Module)`: what a minify worker compiles."""
        lines = [f"    def forward(self, {', '.join(self.inputs)}):"] + [f"        {line}" for line in self.body()]
        return "import torch\n\n\nclass Repro(torch.nn.Module):\n" + "\n".join(lines) + "\n"

    def prefix(self, count: int) -> "Program":
        """The first `count` steps, with only the inputs they read."""
        kept = self.steps[:count]
        used = {r.name for step in kept for r in refs([step.args, step.kwargs])}
        return Program({n: t for n, t in self.inputs.items() if n in used}, list(kept))

    def input_list(self) -> list[torch.Tensor]:
        return list(self.inputs.values())

    def describe_inputs(self) -> list[str]:
        return [f"{name}: {describe(t)}" for name, t in self.inputs.items()]

    def key(self) -> str:
        """Same source and same inputs (values, strides, offsets) give the same key."""
        h = hashlib.sha256(self.module_source().encode())
        for t in self.inputs.values():
            h.update(repr((t.dtype, tuple(t.shape), t.stride(), t.storage_offset())).encode())
            h.update(bytes(t.untyped_storage()))
        return h.hexdigest()[:16]

    def __repr__(self) -> str:
        return "\n".join(["Program:", *[f"  # {d}" for d in self.describe_inputs()],
                          *[f"  {line}" for line in self.function_source().splitlines()]])


def refs(value) -> list[Ref]:
    """Every Ref inside an argument (lists, tuples and dicts included)."""
    if isinstance(value, Ref):
        return [value]
    if isinstance(value, (list, tuple)):
        return [r for v in value for r in refs(v)]
    if isinstance(value, dict):
        return [r for v in value.values() for r in refs(v)]
    return []


def describe(t: torch.Tensor) -> str:
    dtype = str(t.dtype).replace("torch.", "")
    contiguous = t.is_contiguous()
    layout = "" if contiguous and not t.storage_offset() else f" stride={t.stride()} offset={t.storage_offset()}"
    return f"{dtype}{list(t.shape)}{layout}"


class Unrenderable(Exception):
    """An argument that cannot be written as source (a device, a generator, a complex number)."""


def literal(value) -> str:
    if isinstance(value, Ref):
        return value.name
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
        return str(value)
    if isinstance(value, torch.Size):
        return repr(tuple(value))
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return f"[{', '.join(literal(v) for v in value)}]"
    if value is Ellipsis:
        return "..."
    raise Unrenderable(type(value).__name__)


class Builder:
    """Collects inputs and steps while a program is drawn, running each step eagerly."""

    def __init__(self, allow_nonfinite: bool):
        self.allow_nonfinite = allow_nonfinite
        self.inputs: dict[str, torch.Tensor] = {}
        self.steps: list[Step] = []
        self.values: dict[str, Any] = {}

    def add_input(self, t: torch.Tensor) -> Ref:
        name = f"x{len(self.inputs)}"
        self.inputs[name] = t
        self.values[name] = t
        return Ref(name)

    def tensors(self) -> list[Ref]:
        """Step outputs that are single tensors, newest first (candidates to chain from)."""
        return [Ref(s.output) for s in reversed(self.steps) if isinstance(self.values[s.output], torch.Tensor)]

    def add_step(self, entry: OpEntry, args: list, kwargs: dict) -> None:
        """Run the call eagerly; a call eager rejects, or one yielding NaN/Inf, rejects the draw."""
        if entry.order is not None:
            args = [args[i] for i in entry.order]
        try:
            step = Step(entry.name, entry.call, args, kwargs, f"v{len(self.steps)}")
            step.source()
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out = entry.fn()(*self._resolve(args), **self._resolve(kwargs))
        except Exception:
            reject()
        leaves = [out] if isinstance(out, torch.Tensor) else list(out) if isinstance(out, (tuple, list)) else None
        if not leaves or not all(isinstance(x, torch.Tensor) for x in leaves) or any(x.is_complex() for x in leaves):
            reject()
        if not self.allow_nonfinite and not all(_finite(x) for x in leaves):
            reject()
        self.values[step.output] = out
        self.steps.append(step)

    def _resolve(self, value):
        if isinstance(value, Ref):
            return self.values[value.name]
        if isinstance(value, (list, tuple)):
            return type(value)(self._resolve(v) for v in value)
        if isinstance(value, dict):
            return {k: self._resolve(v) for k, v in value.items()}
        return value

    def program(self) -> Program:
        return Program(dict(self.inputs), list(self.steps))


def _finite(t: torch.Tensor) -> bool:
    return not t.is_floating_point() or bool(torch.isfinite(t).all())


# --------------------------------------------------------------------------- tensors

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


def _domain(entry: OpEntry) -> tuple:
    return tuple(getattr(entry.info, "domain", None) or (None, None))


def _make_kwargs_domain(kwargs: dict | None) -> tuple[tuple, bool]:
    kwargs = kwargs or {}
    return (kwargs.get("low"), kwargs.get("high")), bool(kwargs.get("exclude_zero"))


def _in_domain(t: torch.Tensor, domain: tuple) -> bool:
    low, high = domain
    if t.numel() == 0:
        return True
    x = t.double()
    return (low is None or bool((x > low).all())) and (high is None or bool((x < high).all()))


def operand(draw, b: Builder, dtypes: list, domain=(None, None), exclude_zero: bool = False,
            allow_nonfinite: bool = False) -> Ref:
    """The tensor a step works on: an earlier step's output (fusing the two) or a new input."""
    chainable = [r for r in b.tensors() if b.values[r.name].dtype in dtypes
                 and _in_domain(b.values[r.name], domain)
                 and not (exclude_zero and bool((b.values[r.name] == 0).any()))]
    choice = draw(st.sampled_from(chainable + ["new"]))
    if choice != "new":
        return choice
    dtype = draw(st.sampled_from(dtypes))
    return b.add_input(draw(tensors(dtype, domain=domain, exclude_zero=exclude_zero, allow_nonfinite=allow_nonfinite)))


def _sample_kwargs(entry: OpEntry, dtype: torch.dtype, t: torch.Tensor) -> dict:
    make = getattr(entry.info, "sample_kwargs", None)
    return dict(make("cpu", dtype, t)[0]) if make else {}


def unary_step(draw, entry: OpEntry, b: Builder, dtypes: list, allow_nonfinite: bool) -> None:
    x = operand(draw, b, dtypes, _domain(entry), allow_nonfinite=allow_nonfinite)
    t = b.values[x.name]
    b.add_step(entry, [x], _sample_kwargs(entry, t.dtype, t))


def binary_step(draw, entry: OpEntry, b: Builder, dtypes: list, allow_nonfinite: bool) -> None:
    info = entry.info
    lhs_domain, lhs_nonzero = _make_kwargs_domain(getattr(info, "lhs_make_tensor_kwargs", None))
    rhs_domain, rhs_nonzero = _make_kwargs_domain(getattr(info, "rhs_make_tensor_kwargs", None))
    lhs = operand(draw, b, dtypes, lhs_domain, lhs_nonzero, allow_nonfinite)
    t = b.values[lhs.name]
    kinds = ("tensor", "scalar", "self") if info.supports_rhs_python_scalar else ("tensor", "self")
    kind = draw(st.sampled_from(kinds))
    if kind == "self" and (rhs_nonzero or rhs_domain != (None, None)):
        kind = "tensor"
    if kind == "scalar":
        group = "bool" if t.dtype == torch.bool else "float" if t.dtype.is_floating_point else "int"
        rhs = draw(st.sampled_from([s for s in SCALARS[group] if not (rhs_nonzero and s == 0)]))
    elif kind == "self":
        rhs = lhs
    else:
        dtype = draw(st.sampled_from([t.dtype] + [d for d in dtypes if d != t.dtype]))
        shape = draw(broadcast_shapes(tuple(t.shape)))
        rhs = b.add_input(draw(tensors(dtype, shape, rhs_domain, rhs_nonzero, allow_nonfinite)))
    b.add_step(entry, [lhs, rhs], _sample_kwargs(entry, t.dtype, t))


def reduction_step(draw, entry: OpEntry, b: Builder, dtypes: list, allow_nonfinite: bool) -> None:
    x = operand(draw, b, dtypes, allow_nonfinite=allow_nonfinite)
    t = b.values[x.name]
    extra = list(entry.info.generate_args_kwargs(t)) or [((), {})]
    args, kwargs = extra[draw(st.integers(0, len(extra) - 1))]
    kwargs = dict(kwargs)
    how = draw(st.sampled_from(("all", "one", "several") if entry.info.supports_multiple_dims else ("all", "one")))
    if how != "all" and t.dim() > 0:
        dims = draw(st.lists(st.integers(-t.dim(), t.dim() - 1), min_size=1, max_size=1 if how == "one" else t.dim(),
                             unique_by=lambda d: d % t.dim()))
        kwargs["dim"] = dims[0] if how == "one" else tuple(dims)
        if entry.info.name not in NO_KEEPDIM and draw(st.booleans()):
            kwargs["keepdim"] = True
    b.add_step(entry, [x, *args], kwargs)


def pointwise_step(draw, entry: OpEntry, b: Builder, dtypes: list, allow_nonfinite: bool) -> None:
    """A pointwise op with scalar arguments (gelu, leaky_relu, clamp, ...): our tensor,
    the scalar arguments of one of OpInfo's samples."""
    x = operand(draw, b, dtypes, allow_nonfinite=allow_nonfinite)
    t = b.values[x.name]
    samples = op_samples(entry.name, t.dtype)
    if not samples:
        reject()
    sample = samples[draw(st.integers(0, len(samples) - 1))]
    b.add_step(entry, [x, *sample.args], dict(sample.kwargs))


@functools.lru_cache(maxsize=4096)
def op_samples(name: str, dtype: torch.dtype) -> tuple:
    """OpInfo's sample inputs for an op and dtype (fixed seed, so the same every time), small ones only."""
    entry = catalog()[name]
    state = random.getstate()  # some sample functions draw from `random` too
    with torch.random.fork_rng():
        torch.manual_seed(0)
        random.seed(0)
        try:
            samples = list(entry.info.sample_inputs("cpu", dtype))
        except Exception:
            return ()
        finally:
            random.setstate(state)
    return tuple(s for s in samples if _sample_tensors_small(s))


def _sample_tensors_small(sample) -> bool:
    leaves = _tensor_leaves([sample.input, *sample.args, *sample.kwargs.values()])
    return all(t.numel() <= MAX_SAMPLE_NUMEL and t.layout == torch.strided and not t.is_complex() for t in leaves)


def _tensor_leaves(value) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensor_leaves(v)]
    return []


def sampled_step(draw, entry: OpEntry, b: Builder, dtypes: list, allow_nonfinite: bool) -> None:
    """Any other op: one of OpInfo's own samples (valid shapes, indices and arguments), with
    each of its tensors given a drawn memory layout (values unchanged)."""
    dtype = draw(st.sampled_from(dtypes))
    samples = op_samples(entry.name, dtype)
    if not samples:
        reject()
    sample = samples[draw(st.integers(0, len(samples) - 1))]

    def lift(value):
        if isinstance(value, torch.Tensor):
            return b.add_input(restride(value.detach().clone(), draw(st.sampled_from(VALUE_LAYOUTS))))
        if isinstance(value, (list, tuple)):
            return type(value)(lift(v) for v in value)
        return value

    args = [lift(sample.input), *[lift(a) for a in sample.args]]
    b.add_step(entry, args, {k: lift(v) for k, v in sample.kwargs.items()})


STEP_BUILDERS = {"unary": unary_step, "binary": binary_step, "reduction": reduction_step,
                 "pointwise": pointwise_step, "sampled": sampled_step}


@st.composite
def steps(draw, entry: OpEntry, b: Builder, dtypes: tuple = DEFAULT_DTYPES, allow_nonfinite: bool = False,
          device_type: str = "cpu"):
    """Add one call of `entry` to the program being built in `b`."""
    usable = entry.dtypes(dtypes, device_type)
    if not usable:
        reject()
    STEP_BUILDERS[entry.family](draw, entry, b, usable, allow_nonfinite)
    return b


def programs(ops=None, dtypes=None, max_steps: int = 3, allow_nonfinite: bool = False,
             device_type: str = "cpu") -> st.SearchStrategy[Program]:
    """Programs of 1..max_steps op calls drawn from `ops` (names, default: every op in
    `catalog()`), on tensors of `dtypes` (names or torch dtypes, default DEFAULT_DTYPES).
    The op names are checked here, when the strategy is made, not at the first draw."""
    allowed = tuple(d if isinstance(d, torch.dtype) else parse_dtypes([d])[0] for d in (dtypes or DEFAULT_DTYPES))
    entries = [e for e in resolve_ops(ops) if e.dtypes(allowed, device_type)]
    if not entries:
        raise ValueError("no op supports any of the dtypes asked for")
    return _programs(tuple(e.name for e in entries), allowed, max_steps, allow_nonfinite, device_type)


@st.composite
def _programs(draw, names: tuple, allowed: tuple, max_steps: int, allow_nonfinite: bool, device_type: str):
    entries = [catalog()[name] for name in names]  # names, not entries: hypothesis prints its arguments
    b = Builder(allow_nonfinite)
    draw(steps(draw(st.sampled_from(entries)), b, allowed, allow_nonfinite, device_type))
    # "one more?" before each further step, as hypothesis's own lists do: shrinking can then
    # delete any one step (with its marker) without shifting the choices of the others.
    while len(b.steps) < max_steps and draw(st.booleans()):
        draw(steps(draw(st.sampled_from(entries)), b, allowed, allow_nonfinite, device_type))
    return b.program()
