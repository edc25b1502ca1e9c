"""The one oracle: a ladder of checks, and the one check every candidate goes through.

Detection, reduction, repro.py and generated tests all judge a run by `check`, so a failure is
judged the same way everywhere. A check answers `fail` (the compiled run raises, or a rung of
the ladder below differs), `pass`, or `invalid` (eager raises, eager is not deterministic, or
integer outputs differ only where eager itself misses the fp64 reference): an invalid candidate
is never a bug.

The ladder, tried in order on every output (and every input the graph writes to); the first
rung on which compiled and eager differ names the failure, and is part of its signature:

  exception    compiling or running the compiled code raises (kinds compile_error, runtime_error)
  meta         shape, dtype or device
  nan_inf      a NaN or Inf where eager has a finite value, or the reverse, at any tolerance
               (NaN equals NaN whatever its sign). Where compiled agrees with the fp64
               reference and eager does not, it is numerics, not a failure.
  values       floats against tolerance: allclose with dtype-aware tolerances, or (as
               torch._dynamo.utils.same does) compiled's RMSE against an fp64 reference within
               a multiple of eager's own; `strict`: by the tolerances alone. Integers and bools
               exactly (their tolerance is zero), so a wrong uint8 and the wrong float computed
               from it are one kind of failure and reduction may keep either. An integer or
               bool that differs only where eager itself misses the fp64 reference follows
               floating rounding upstream: `invalid` (fp_noise), never a miscompile
  exact        float outputs equal where eager computes them exactly: value-selecting ops
               (min/max/where/index/gather/cat/copy/sort values ...) fed only by inputs or other
               value-selecting ops, whose result must be one of their inputs' values
  signed_zero  -0.0 against +0.0 where eager is exact (ignorable)
  layout       strides (of dims longer than 1), and whether an output is a view of an input
               (with its storage offset) when eager's is; its own kind, `layout` (ignorable)
  bitwise      every bit but a NaN's sign and payload (`strict` only)

A pass whose outputs still differ from eager (within tolerance, as close to fp64 as eager, a
NaN of another sign) is kind `numerics`, with the evidence in its metrics (`numerics_lines`).
"""
import math
import operator
from dataclasses import dataclass, field

import torch

from compiler.rungs import IGNORABLE, RUNG_WORDS, RUNGS, parse_ignore  # noqa: F401 (re-exported)
from compiler.signature import exception_signature, ladder_signature
from compiler.tensor_kinds import copy_tensor, is_zero_tensor

# dtype -> (atol, rtol, rmse multiplier)
TOLERANCES = {
    torch.float64: (1e-7, 1e-7, 2.0),
    torch.float32: (1e-4, 1e-4, 2.0),
    torch.float16: (1e-3, 1e-3, 3.0),
    torch.bfloat16: (1e-2, 1e-2, 3.0),
}
DEFAULT_TOLERANCE = (1e-4, 1e-4, 2.0)

# Ops whose result is made of values of their inputs (or constants), so eager computes it
# exactly when its inputs are exact: by name, as Dynamo's torch-level graphs and AOT's aten
# graphs both spell them (`torch.maximum`, `x.max`, `aten.maximum.default`).
VALUE_SELECTING = frozenset("""
    max min maximum minimum fmax fmin amax amin aminmax clamp clamp_min clamp_max clip hardtanh relu relu6
    threshold where masked_fill masked_scatter masked_select index index_select index_put gather scatter
    select_scatter slice_scatter diagonal_scatter take take_along_dim embedding sort topk kthvalue median
    nanmedian mode cummax cummin max_pool1d max_pool2d max_pool3d max_pool2d_with_indices
    max_pool3d_with_indices adaptive_max_pool1d adaptive_max_pool2d adaptive_max_pool3d cat concat
    concatenate stack hstack vstack dstack split split_with_sizes chunk unbind tensor_split narrow select
    slice getitem flip fliplr flipud roll rot90 repeat tile repeat_interleave expand expand_as broadcast_to
    view view_as reshape reshape_as flatten unflatten squeeze unsqueeze permute transpose t movedim
    swapaxes swapdims contiguous clone copy detach alias diagonal diag tril triu constant_pad_nd pad
    as_strided unfold pixel_shuffle pixel_unshuffle channel_shuffle full full_like zeros zeros_like ones
    ones_like scalar_tensor lift_fresh_copy
    gt lt ge le eq ne logical_and logical_or logical_xor logical_not isnan isinf isfinite isposinf isneginf
    signbit bitwise_and bitwise_or bitwise_xor bitwise_not and_ or_ xor invert
""".split())  # the last line: comparisons and logic, exact too (they pick which value a where takes)


@dataclass
class Outcome:
    status: str  # "fail" | "pass" | "invalid"
    kind: str = ""  # compile_error | runtime_error | accuracy | layout | crash | hang | numerics | eager_error ...
    signature: str = ""
    message: str = ""
    metrics: list = field(default_factory=list)
    reference: str = ""  # what the compiled values were judged against: "fp64" or "eager"
    rung: str = ""  # the rung of the ladder that fired (RUNGS), for a failure


def flatten(value, path="out"):
    """Leaves of nested tuples/lists/dicts, with their paths."""
    if isinstance(value, (tuple, list)):
        return [leaf for i, v in enumerate(value) for leaf in flatten(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [leaf for k in sorted(value, key=str) for leaf in flatten(value[k], f"{path}[{k!r}]")]
    return [(path, value)]


def clone_input(x):
    """An exact copy: same kind (ZeroTensor, conj/neg bits, Parameter), dtype, shape, strides, offset, grad."""
    return copy_tensor(x) if isinstance(x, torch.Tensor) else x


def clone_inputs(inputs):
    return [clone_input(x) for x in inputs]


def to_fp64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return clone_input(x).detach().to(torch.float64).requires_grad_(x.requires_grad)
    return clone_input(x)


@dataclass
class Run:
    """One run on copies of the inputs: what it returned (plus the inputs it wrote to, under
    `input[i]`), and which input each returned tensor is a view of."""
    value: object
    aliases: dict  # output path -> index of the input whose storage it shares


def _storage(t):
    storage = None if is_zero_tensor(t) else t.untyped_storage()  # a ZeroTensor has none
    return (t.device, storage.data_ptr()) if storage is not None and storage.nbytes() else None


def run(fn, inputs) -> Run:
    args = clone_inputs(inputs)
    out = fn(*args)
    mutated = {f"input[{i}]": a for i, (a, b) in enumerate(zip(args, inputs))
               if isinstance(a, torch.Tensor) and not _same_bits(a.detach(), b.detach())}
    value = {"out": out, **mutated} if mutated else out
    storages = {_storage(a): i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and _storage(a)}
    aliases = {path: storages.get(_storage(v)) for path, v in flatten(value)
               if isinstance(v, torch.Tensor) and "input[" not in path}
    return Run(value, aliases)


def run_with_mutations(fn, inputs):
    """Run fn on a copy of inputs; return its outputs plus the inputs it wrote to."""
    return run(fn, inputs).value


def _same_bits(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(torch.isclose(a, b, rtol=0, atol=0, equal_nan=True).all())
    return torch.equal(a, b)


def _rmse(a, b):
    return math.sqrt(torch.mean((a.double() - b.double()) ** 2).item()) if a.numel() else 0.0


def _integer_noise(eager, actual, reference):
    """True when integer/bool differences only follow floating rounding upstream: at every
    differing element the compiled value agrees with the fp64 reference, or compiled misses
    the reference no more often than eager itself does (e.g. `x > 0` with x within rounding of 0)."""
    if reference is None or reference.shape != eager.shape:
        return False
    r = reference.detach().to(eager.device, eager.dtype)
    diff = eager != actual
    eager_off, compiled_off = int((eager != r).sum()), int((actual != r).sum())
    return bool((actual[diff] == r[diff]).all()) or (0 < compiled_off <= 2 * eager_off)


def _pattern(x):
    """0 finite, 1 NaN (either sign), 2 +Inf, 3 -Inf, elementwise."""
    if x.is_complex():
        return torch.where(x.isnan(), 1, torch.where(x.isinf(), 2, 0))
    return torch.where(x.isnan(), 1, torch.where(x == math.inf, 2, torch.where(x == -math.inf, 3, 0)))


def _scalar(x) -> str:
    value = x.item()
    if isinstance(value, float) and value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    return repr(value)


def _first(mask, e, a) -> str:
    """`at (i, j): eager X, compiled Y` for the first True of mask."""
    index = tuple(int(i) for i in mask.nonzero()[0]) if mask.dim() else ()
    return f"at {index}: eager {_scalar(e[index])}, compiled {_scalar(a[index])}"


def _ulp(r, dtype):
    """The spacing of `dtype`'s values at each |r| (fp64), for errors in ulps."""
    info = torch.finfo(dtype)
    _, exponent = torch.frexp(r.abs().clamp_min(info.tiny))
    return torch.ldexp(torch.full_like(r, info.eps), exponent - 1)


def fp64_evidence(e, a, r) -> dict:
    """Max error of eager and of compiled against the fp64 reference: absolute, in ulps of
    the output dtype, relative; over the elements finite in all three."""
    e64, a64, r64 = e.double(), a.double(), r.detach().to(e.device).double()
    finite = torch.isfinite(e64) & torch.isfinite(a64) & torch.isfinite(r64)
    if not bool(finite.any()):
        return {}
    ulp, scale = _ulp(r64[finite], e.dtype), r64[finite].abs().clamp_min(torch.finfo(e.dtype).tiny)
    out = {}
    for who, x in (("eager", e64), ("compiled", a64)):
        err = (x[finite] - r64[finite]).abs()
        out.update({f"fp64_err_{who}": err.max().item(), f"fp64_ulp_{who}": (err / ulp).max().item(),
                    f"fp64_rel_{who}": (err / scale).max().item()})
    return out


def _fail(m, rung, why):
    m.update(ok=False, rung=rung, why=why)
    return m


def compare_tensor(name, expected, actual, reference, atol=None, rtol=None, strict=False, exact=False,
                   ignore=(), aliases=None, bitwise=False):
    """Metrics for one output and whether it passes; `rung` names the first rung it fails.
    `expected` is eager's value; `strict` judges by the tolerances alone (no fp64 leniency, no
    noise explanation); `bitwise` adds the last rung; `exact`: eager computes this output exactly
    (a value-selecting op); `aliases`: (the input eager's output is a view of, compiled's), and
    the layout rung is checked only with them."""
    m = {"output": name, "dtype": str(expected.dtype).replace("torch.", ""), "shape": list(expected.shape)}
    if actual.shape != expected.shape or actual.dtype != expected.dtype or actual.device != expected.device:
        return _fail(m, "meta", f"shape/dtype/device {list(actual.shape)}/{actual.dtype}/{actual.device} != eager's "
                                f"{list(expected.shape)}/{expected.dtype}/{expected.device}")
    e, a = expected.detach(), actual.detach()
    r = reference.detach() if reference is not None and reference.shape == e.shape else None
    if r is not None and r.device != e.device:
        r = r.to(e.device)
    floating = e.is_floating_point() or e.is_complex()
    failed = _judge_floats(m, e, a, r, atol, rtol, strict, exact, ignore) if floating \
        else _judge_integers(m, e, a, r, strict)
    if failed is not None:
        return failed
    if aliases is not None and "layout" not in ignore:
        why = _layout_difference(e, a, *aliases)
        if why:
            return _fail(m, "layout", why)
    if bitwise and floating and e.numel():
        ev, av = (torch.view_as_real(e), torch.view_as_real(a)) if e.is_complex() else (e, a)
        same = ((ev == av) & (ev.signbit() == av.signbit())) | (ev.isnan() & av.isnan())
        if not bool(same.all()):
            return _fail(m, "bitwise", f"bits differ at {int((~same).sum())} of {ev.numel()} elements "
                                       f"(first {_first(~same, ev, av)})")
    m["ok"] = True
    return m


def _judge_integers(m, e, a, r, strict):
    diff = e != a
    m.update(mismatch_fraction=diff.double().mean().item() if e.numel() else 0.0,
             max_abs_err=(e.double() - a.double()).abs().max().item() if e.numel() else 0.0)
    if not bool(diff.any()):
        return None
    if not strict and _integer_noise(e, a, r):
        m.update(ok=False, rung="values", noise=True, numerics="noise")
        return m
    return _fail(m, "values", f"{int(diff.sum())} of {e.numel()} elements differ from eager "
                              f"(first {_first(diff, e, a)})")


def _judge_floats(m, e, a, r, atol, rtol, strict, exact, ignore):
    d_atol, d_rtol, multiplier = TOLERANCES.get(e.dtype, DEFAULT_TOLERANCE)
    atol, rtol = (d_atol if atol is None else atol), (d_rtol if rtol is None else rtol)
    wide = torch.complex128 if e.is_complex() else torch.float64
    e64, a64 = e.to(wide), a.to(wide)
    n = e.numel()
    pe, pa = _pattern(e64), _pattern(a64)
    differ = pe != pa
    both = (pe == 0) & (pa == 0)
    err = torch.where(both, (a64 - e64).abs(), torch.zeros((), dtype=torch.float64, device=e.device))
    close = torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    m.update(max_abs_err=err.max().item() if n else 0.0,
             max_rel_err=(err / e64.abs().clamp_min(1e-12)).max().item() if n else 0.0,
             mismatch_fraction=(~close).double().mean().item() if n else 0.0,
             max_ulp=(err / (torch.finfo(e.dtype).eps * e64.abs().clamp_min(torch.finfo(e.dtype).tiny))).max().item()
             if n else 0.0)
    identical = bool(((e64 == a64) | (pe == 1) & (pa == 1)).all()) and not bool(differ.any())
    if not identical and r is not None and not e.is_complex():
        m.update(fp64_evidence(e, a, r))
    if bool(differ.any()):  # rung nan_inf
        m["nonfinite_mismatch"] = int(differ.sum())
        explained = torch.zeros_like(differ)
        if not strict and r is not None:
            explained = differ & (_pattern(r.to(e.dtype).to(wide)) == pa)  # compiled agrees with fp64, eager does not
        if not bool((explained == differ).all()):
            bad = differ & ~explained
            return _fail(m, "nan_inf", f"NaN/Inf where eager has a finite value or the reverse at {int(bad.sum())} of "
                                       f"{n} elements (first {_first(bad, e, a)})")
        index = tuple(int(i) for i in differ.nonzero()[0]) if differ.dim() else ()
        m.update(numerics="nan_inf_fp64", nonfinite_example=f"{_first(differ, e, a)}, fp64 {_scalar(r[index])}")
    far = both & ~close
    if bool(far.any()):  # rung values
        finite_ref = r is not None and not e.is_complex()
        judged = both & torch.isfinite(r.to(wide)) if finite_ref else None
        if strict or not finite_ref or bool((far & ~judged).any()):
            return _fail(m, "values", _values_why(m, e, a, far))
        ref = r.to(wide)[judged]
        err_compiled, err_eager = _rmse(a64[judged], ref), _rmse(e64[judged], ref)
        m.update(rmse_compiled=err_compiled, rmse_eager=err_eager,
                 rmse_ratio=err_compiled / err_eager if err_eager else math.inf)
        if err_compiled > multiplier * err_eager + atol / 10:
            return _fail(m, "values", _values_why(m, e, a, far))
        m["numerics"] = m.get("numerics") or "fp64"
    elif not identical:
        m["numerics"] = m.get("numerics") or "within_tolerance"
    if exact and not e.is_complex():
        unequal = both & (a64 != e64)
        if bool(unequal.any()):  # rung exact
            return _fail(m, "exact", f"{int(unequal.sum())} of {n} elements differ from eager, which is exact here "
                                     f"(a value-selecting op; first {_first(unequal, e, a)})")
        if "signed_zero" not in ignore:
            signs = (e64 == 0) & (a64 == 0) & (e.signbit() != a.signbit())
            if bool(signs.any()):
                return _fail(m, "signed_zero", f"the sign of zero differs at {int(signs.sum())} of {n} elements "
                                               f"(first {_first(signs, e, a)})")
    if not e.is_complex() and bool(((pe == 1) & (pa == 1) & (e.signbit() != a.signbit())).any()):
        m["numerics"] = m.get("numerics") or "nan_sign"
    return None


def _values_why(m, e, a, far):
    shown = ", ".join(f"{k}={m[k]:.3g}" for k in ("max_abs_err", "mismatch_fraction", "rmse_ratio") if k in m)
    return f"differs from eager: {shown} (first {_first(far, e, a)})"


def _layout_difference(e, a, alias_e, alias_a) -> str:
    if e.numel():
        dims = [d for d in range(e.dim()) if e.shape[d] > 1]
        if any(e.stride(d) != a.stride(d) for d in dims):
            return f"strides {tuple(a.stride())}, eager's {tuple(e.stride())} (equal values)"
    if alias_e != alias_a:
        if alias_e is None:
            return f"compiled output is a view of input {alias_a}; eager's is a tensor of its own"
        return f"eager's output is a view of input {alias_e}; compiled's is " + \
            ("a tensor of its own" if alias_a is None else f"a view of input {alias_a}")
    if alias_e is not None and e.storage_offset() != a.storage_offset():
        return f"storage offset {a.storage_offset()} into input {alias_e}, eager's {e.storage_offset()}"
    return ""


def compare(expected, actual, reference=None, atol=None, rtol=None, strict=False, ignore=(), exact=(),
            aliases=None, bitwise=False):
    """Per-leaf metrics for all outputs; `ok` only if every leaf passes. `exact`: paths of
    outputs eager computes exactly; `aliases`: ({path: input} of eager, of compiled), without
    which layout is not compared; `bitwise`: the last rung too."""
    exp, act = flatten(expected), flatten(actual)
    ref = flatten(reference) if reference is not None else [(p, None) for p, _ in exp]
    if [p for p, _ in exp] != [p for p, _ in act]:
        return False, [{"output": "structure", "ok": False, "rung": "meta", "why": "output structure differs"}]
    metrics = []
    for (name, e), (_, a), (_, r) in zip(exp, act, ref):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            metrics.append(compare_tensor(name, e, a, r if isinstance(r, torch.Tensor) else None, atol, rtol, strict,
                                          name in exact, ignore,
                                          None if aliases is None else (aliases[0].get(name), aliases[1].get(name)),
                                          bitwise))
        elif isinstance(e, float) and isinstance(a, (int, float)):
            ok = math.isclose(e, a, rel_tol=1e-4, abs_tol=1e-5) or (math.isnan(e) and math.isnan(a))
            metrics.append({"output": name, "ok": ok, **({} if ok else {"rung": "values", "why": f"{a} != eager's {e}"})})
        else:
            ok = type(e) is type(a) and e == a
            rung = "values" if type(e) is type(a) else "meta"
            metrics.append({"output": name, "ok": ok, **({} if ok else {"rung": rung, "why": f"{a!r} != eager's {e!r}"})})
    return all(m["ok"] for m in metrics), metrics


def run_reference(model, inputs):
    """(fp64 outputs, name): on the inputs' device, else on the CPU, else none (judge by eager)."""
    try:
        return run_with_mutations(model, [to_fp64(x) for x in inputs]), "fp64"
    except Exception:
        pass
    if any(isinstance(x, torch.Tensor) and x.device.type != "cpu" for x in inputs):
        try:
            cpu = [x.cpu() if isinstance(x, torch.Tensor) else x for x in inputs]
            return run_with_mutations(model, [to_fp64(x) for x in cpu]), "fp64-cpu"
        except Exception:
            pass
    return None, "eager"


def _seeded(fn, inputs, seed) -> Run:
    if seed is not None:
        torch.manual_seed(seed)
    return run(fn, inputs)


def check(model, inputs, compiled, stage="inductor", atol=None, rtol=None, strict=False, seed=None, ignore=()):
    """Run eager (twice), an fp64 reference and the compiled model on copies of `inputs`, and
    climb the ladder. With `seed`, every run starts from the same RNG state (for graphs that
    draw random numbers); `strict`: tolerances alone, and the bitwise rung; `ignore`: rungs
    not to check (`signed_zero`, `layout`)."""
    try:
        eager = _seeded(model, inputs, seed)
        again = _seeded(model, inputs, seed)
    except Exception as exc:  # the candidate itself is broken: not a compiler bug
        return Outcome("invalid", "eager_error", message=f"eager raised {type(exc).__name__}: {exc}"[:300])
    same, _ = compare(eager.value, again.value)
    if not same:
        return Outcome("invalid", "nondeterministic", message="two eager runs differ (random or nondeterministic ops)")
    if seed is not None:
        torch.manual_seed(seed)
    reference, ref_name = run_reference(model, inputs)
    try:
        actual = _seeded(compiled, inputs, seed)
    except Exception as exc:
        kind, sig, msg = exception_signature(exc, stage)
        return Outcome("fail", kind, sig, msg, reference=ref_name, rung="exception")
    reference = _matching(reference, eager.value)
    _, metrics = compare(eager.value, actual.value, reference, atol, rtol, strict, ignore,
                         exact_outputs(model, eager.value), (eager.aliases, actual.aliases), bitwise=strict)
    return outcome_of(metrics, stage, ref_name)


def outcome_of(metrics: list, stage: str, ref_name: str = "") -> Outcome:
    """The Outcome of compared outputs: the first rung any output fails, else a pass (kind
    `numerics` when outputs still differ from eager, with the evidence in the metrics)."""
    failing = [m for m in metrics if not m["ok"] and not m.get("noise")]
    if not failing:
        noise = [m for m in metrics if m.get("noise")]
        if noise:
            return Outcome("invalid", "fp_noise", metrics=metrics, reference=ref_name,
                           message=f"{', '.join(m['output'] for m in noise)}: integer/bool differences only where "
                                   f"eager itself misses the fp64 reference (rounding near a threshold), not a bug")
        differ = [m for m in metrics if m.get("numerics")]
        if differ:
            return Outcome("pass", "numerics", metrics=metrics, reference=ref_name,
                           message="; ".join(numerics_lines(metrics)))
        return Outcome("pass", metrics=metrics, reference=ref_name)
    rung = min((m.get("rung", "values") for m in failing), key=RUNGS.index)
    worst = next(m for m in failing if m.get("rung", "values") == rung)
    kind = "layout" if rung == "layout" else "accuracy"
    message = f"{worst['output']} ({worst.get('dtype', '?')}): {worst.get('why') or RUNG_WORDS[rung]}"
    return Outcome("fail", kind, ladder_signature(kind, stage, rung), message, metrics, ref_name, rung)


NUMERICS_WORDS = {"within_tolerance": "differs from eager within tolerance",
                  "fp64": "differs from eager beyond tolerance but is as close to the fp64 reference as eager",
                  "nan_inf_fp64": "has NaN/Inf where eager does not (or the reverse), as the fp64 reference does",
                  "nan_sign": "differs from eager only in the sign of a NaN",
                  "noise": "integers differ only where eager itself misses the fp64 reference"}


def numerics_lines(metrics: list) -> list:
    """One line per output that differs from eager without failing: how, with the numbers
    (max error of eager and of compiled against fp64, absolute, in ulps, relative)."""
    lines = []
    for m in metrics:
        if not m.get("numerics"):
            continue
        text = f"{m['output']} ({m.get('dtype', '?')}) {NUMERICS_WORDS.get(m['numerics'], m['numerics'])}"
        if m.get("nonfinite_mismatch"):
            text += f" at {m['nonfinite_mismatch']} element(s), first {m.get('nonfinite_example', '')}"
        elif m.get("max_abs_err") and m.get("numerics") != "noise":
            text += f" (by up to {m['max_abs_err']:.3g})"
        if "fp64_err_compiled" in m:
            text += (f"; vs fp64, compiled {m['fp64_err_compiled']:.3g} ({m['fp64_ulp_compiled']:.3g} ulp, "
                     f"rel {m['fp64_rel_compiled']:.2g}), eager {m['fp64_err_eager']:.3g} "
                     f"({m['fp64_ulp_eager']:.3g} ulp, rel {m['fp64_rel_eager']:.2g})")
        lines.append(text)
    return lines


def _matching(reference, eager):
    """The reference only where its structure matches eager's (else compare without it)."""
    if reference is None:
        return None
    ref, exp = flatten(reference), flatten(eager)
    return reference if [p for p, _ in ref] == [p for p, _ in exp] else None


# --- which outputs eager computes exactly -------------------------------------------------

def op_name(node) -> str:
    """`maximum` for torch.maximum, x.maximum, aten.maximum.default; in-place ops as their
    plain name (`clamp_` -> `clamp`)."""
    target = node.target
    if isinstance(target, str):
        name = target
    elif hasattr(target, "overloadpacket"):
        name = target.overloadpacket.__name__
    else:
        name = getattr(target, "__name__", None) or str(target)
    name = name.split(".")[-1]
    return name[:-1] if name.endswith("_") and not name.startswith("_") else name


def _graph(model):
    import torch.fx as fx

    from compiler.graph_code import TRACING

    if isinstance(model, fx.GraphModule):
        return model.graph
    try:
        with TRACING:  # see compiler.graph_code.TRACING
            return fx.symbolic_trace(model).graph  # only read: constants frozen by tracing do not matter
    except Exception:  # not traceable: float outputs are judged by tolerance alone
        return None


def exact_outputs(model, value) -> set:
    """Paths (as `flatten` names them) of the outputs eager computes exactly: produced by a
    value-selecting op whose inputs are graph inputs, constants or themselves exact."""
    if not any(isinstance(v, torch.Tensor) and v.is_floating_point() for _, v in flatten(value)):
        return set()
    graph = _graph(model)
    if graph is None:
        return set()
    exact = set()
    for node in graph.nodes:
        if node.op in ("placeholder", "get_attr"):
            exact.add(node)
        elif node.op in ("call_function", "call_method") and (node.target is operator.getitem
                                                              or op_name(node) in VALUE_SELECTING) \
                and all(n in exact for n in node.all_input_nodes):
            exact.add(node)
    output = next(iter(graph.find_nodes(op="output")))
    returned = output.args[0]
    base = flatten(value)
    prefix = "out['out']" if isinstance(value, dict) and "out" in value and any("input[" in p for p, _ in base) else "out"
    return {path for path, node in flatten(returned, prefix) if node in exact}
