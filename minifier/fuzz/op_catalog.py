"""The ops a fuzzer may draw, read from PyTorch's OpInfo database (`op_db`): which ops exist and
what they call, their supported dtypes, and their own sample inputs. Ops are kept when Inductor
lowers or decomposes them and their results are deterministic.

Imports only torch (and hypothesis's settings, which op_db's import disturbs), so users' own
tests can import it.
"""
from __future__ import annotations

import functools
import random
import sys
import types
import unittest
from dataclasses import dataclass, field
from typing import Any, Callable

import torch

FLOAT_DTYPES = (torch.float32, torch.float64, torch.float16, torch.bfloat16)
INT_DTYPES = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)
# Shrinking moves toward the front of each list: float32, the plainest layout, small sizes.
DEFAULT_DTYPES = (*FLOAT_DTYPES, *INT_DTYPES, torch.bool)
MAX_SAMPLE_NUMEL = 4096

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
# variants left out: the nuclear norm is an SVD (LAPACK prints to the console on NaN input)
EXCLUDED_VARIANTS = {"norm.nuc"}
KEEP = {"linalg.vector_norm"}  # decomposed into plain reductions by Inductor
INTERNAL_PREFIXES = ("_", "native_")  # aten-internal ops (OpEntry.internal)
# OpInfo ops whose `op` is a lambda: (torch callable, order of [input, *args] in the call).
CALL_TEMPLATES = {"where": ("torch.where", (1, 0, 2))}


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

    @property
    def internal(self) -> bool:
        """An aten-internal op (`native_group_norm`, `_chunk_cat`): its public wrappers make its
        arguments contiguous first, and eager's kernel may assume they are (native_group_norm
        reads a strided bias as if dense), so only the layouts OpInfo samples are eager's truth."""
        return self.info.name.startswith(INTERNAL_PREFIXES)

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


# What OpInfo's has_nondeterministic_output (torch 2.12 on) marks in torch 2.13: on torch 2.11,
# which lacks the field, these ops are left out by name.
NONDETERMINISTIC_OUTPUT = {"empty", "empty_like", "empty_permuted", "empty_strided", "new_empty",
                           "new_empty_strided", "torch.ops.aten._efficient_attention_forward",
                           "torch.ops.aten._flash_attention_forward"}


def _nondeterministic(info) -> bool:
    return getattr(info, "has_nondeterministic_output", info.name in NONDETERMINISTIC_OUTPUT)


def _entry(info) -> OpEntry | None:
    name = info.name + (f".{info.variant_test_name}" if info.variant_test_name else "")
    if (info.name in EXCLUDED or (info.name.startswith(EXCLUDED_PREFIXES) and info.name not in KEEP)
            or _nondeterministic(info) or getattr(info, "is_factory_function", False) or info.name.endswith("_")
            or name in EXCLUDED_VARIANTS):
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
