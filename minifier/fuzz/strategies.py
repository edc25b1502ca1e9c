"""Hypothesis strategies for small programs of one to a few aten ops, for fuzzing Inductor.

`programs(ops=..., dtypes=...)` draws a `Program`: one to four steps, each an op from PyTorch's
OpInfo database (`op_db`) called on drawn tensors (shapes with 0- and 1-size dims, lengths
around the vector widths and broadcasting; dtypes that promote when mixed;
transposed/sliced/offset/channels_last/expanded layouts; values at the edges of their dtype:
signed zeros, denormals, integer min/max, ties, and NaN/Inf when `allow_nonfinite`) or on the
output of an earlier step, so several ops land in one compiled graph and Inductor gets to fuse
and vectorize them. Every step is run eagerly while it is drawn: a draw that eager rejects
(or, unless `allow_nonfinite`, that yields NaN/Inf) is thrown away at once instead of costing
a compile.

What OpInfo knows is used rather than re-stated: which ops exist and what they call, their
supported dtypes, unary domains (`log` wants x > 0), binary rhs rules (`div` excludes zero),
reduction extra arguments, per-variant keyword arguments (`div(rounding_mode=...)`), and,
for every other op, its own `sample_inputs` (valid shapes, indices and arguments).

The op catalog (minifier.fuzz.op_catalog), the program model (minifier.fuzz.drawn_program)
and the tensor strategies (minifier.fuzz.tensor_strategies) sit beside this module; all four
import only torch, hypothesis, each other and compiler.grads (torch only: the loss a backward
check starts from), so users' own tests can import them.
"""
from __future__ import annotations

import math
import warnings
from typing import Any

import torch
from hypothesis import reject
from hypothesis import strategies as st

from minifier.fuzz.drawn_program import Program, Ref, Step, resolve
from minifier.fuzz.op_catalog import DEFAULT_DTYPES, OpEntry, catalog, op_samples, parse_dtypes, resolve_ops
from minifier.fuzz.tensor_strategies import VALUE_LAYOUTS, broadcast_shapes, restride, sprinkle, tensors

SCALARS = {"float": (2.0, -1.0, 0.5, 3, -2, 0.0, 1e-3, 100.0), "int": (2, -1, 3, 0, -2, 7), "bool": (True, False)}
NO_KEEPDIM = {"count_nonzero"}


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
        return resolve(value, self.values)

    def program(self) -> Program:
        return Program(dict(self.inputs), list(self.steps))


def _finite(t: torch.Tensor) -> bool:
    return not t.is_floating_point() or bool(torch.isfinite(t).all())


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

def sampled_step(draw, entry: OpEntry, b: Builder, dtypes: list, allow_nonfinite: bool) -> None:
    """Any other op: one of OpInfo's own samples (valid shapes, indices and arguments), with
    each of its tensors given a drawn memory layout and, now and then, float values moved to
    the edges of their dtype (indices and other integer arguments unchanged). An internal op
    keeps its samples' layouts: eager is no reference for layouts its callers never pass."""
    dtype = draw(st.sampled_from(dtypes))
    samples = op_samples(entry.name, dtype)
    if not samples:
        reject()
    sample = samples[draw(st.integers(0, len(samples) - 1))]
    edges = ("as sampled", "extremes") + (("special",) if allow_nonfinite else ())
    layouts = ("contiguous",) if entry.internal else VALUE_LAYOUTS

    def lift(value):
        if isinstance(value, torch.Tensor):
            values = sprinkle(value.detach().clone(), draw(st.sampled_from(edges)), draw(st.integers(0, 2**16 - 1)),
                              _domain(entry))
            return b.add_input(restride(values, draw(st.sampled_from(layouts))))
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


def programs(ops=None, dtypes=None, max_steps: int = 4, allow_nonfinite: bool = False,
             device_type: str = "cpu", backward: float = 0.0) -> st.SearchStrategy[Program]:
    """Programs of 1..max_steps op calls drawn from `ops` (names, default: every op in
    `catalog()`), on tensors of `dtypes` (names or torch dtypes, default DEFAULT_DTYPES); about
    a `backward` share of those that can be are checked through backward too (gradients of the
    floating inputs). The op names are checked here, when the strategy is made, not at the first draw."""
    allowed = tuple(d if isinstance(d, torch.dtype) else parse_dtypes([d])[0] for d in (dtypes or DEFAULT_DTYPES))
    entries = [e for e in resolve_ops(ops) if e.dtypes(allowed, device_type)]
    if not entries:
        raise ValueError("no op supports any of the dtypes asked for")
    return _programs(tuple(e.name for e in entries), allowed, max_steps, allow_nonfinite, device_type,
                     round(100 * backward))


FAMILIES = ("unary", "binary", "reduction", "pointwise", "sampled")


def _by_family(names: tuple) -> list[list]:
    """The ops grouped by family, each group listed once per square root of its size: a family
    is drawn by that weight, then an op of it, so the 17 reductions come up about as often as
    5 in 36 draws (not 17 in 294), while the 156 ops that only OpInfo's samples can call (with
    the samples' nice values) still come up most."""
    entries = [catalog()[name] for name in names]
    groups = [group for group in ([e for e in entries if e.family == f] for f in FAMILIES) if group]
    return [group for group in groups for _ in range(math.ceil(math.sqrt(len(group))))]


@st.composite
def _op(draw, groups: list[list]):
    return draw(st.sampled_from(draw(st.sampled_from(groups))))


@st.composite
def _programs(draw, names: tuple, allowed: tuple, max_steps: int, allow_nonfinite: bool, device_type: str,
              backward_percent: int = 0):
    groups = _by_family(names)  # names, not entries: hypothesis prints its arguments
    b = Builder(allow_nonfinite)
    draw(steps(draw(_op(groups)), b, allowed, allow_nonfinite, device_type))
    # "one more?" before each further step, as hypothesis's own lists do: shrinking can then
    # delete any one step (with its marker) without shifting the choices of the others.
    while len(b.steps) < max_steps and draw(st.booleans()):
        draw(steps(draw(_op(groups)), b, allowed, allow_nonfinite, device_type))
    program = b.program()
    program.dynamic = draw(st.sampled_from((False, False, False, True)))  # dynamic shapes now and then
    # backward now and then (no draw at all when never: the forward-only draws stay as they were);
    # shrinking moves the number down, towards forward only, which a backward-only bug resists
    if backward_percent and draw(st.integers(0, 99)) >= 100 - backward_percent:
        program.backward = program.differentiable()
    return program

