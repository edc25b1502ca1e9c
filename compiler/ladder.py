"""The ladder of rungs one output climbs: compiled's value against eager's (and an fp64
reference), with the metrics that show how they differ. The run-level oracle (compiler/oracle.py)
runs the model and judges every output and written input with `compare_tensor`.

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

An output that passes every rung but still differs from eager (within tolerance, as close to
fp64 as eager, a NaN of another sign) says how in its metrics (`numerics`).
"""
import math

import torch

from compiler.judging import Judging
from compiler.tensor_kinds import is_zero_tensor

# dtype -> (atol, rtol, rmse multiplier)
TOLERANCES = {
    torch.float64: (1e-7, 1e-7, 2.0),
    torch.float32: (1e-4, 1e-4, 2.0),
    torch.float16: (1e-3, 1e-3, 3.0),
    torch.bfloat16: (1e-2, 1e-2, 3.0),
}
DEFAULT_TOLERANCE = (1e-4, 1e-4, 2.0)


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
    """0 finite, 1 NaN (either sign), 2 +Inf, 3 -Inf, elementwise (one byte each)."""
    p = torch.zeros(x.shape, dtype=torch.uint8, device=x.device)
    if x.is_complex():
        return p.masked_fill_(x.isinf(), 2).masked_fill_(x.isnan(), 1)
    return p.masked_fill_(x == math.inf, 2).masked_fill_(x == -math.inf, 3).masked_fill_(x.isnan(), 1)


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


def fp64_evidence(e, a, r, wide=None) -> dict:
    """Max error of eager and of compiled against the fp64 reference: absolute, in ulps of
    the output dtype, relative; over the elements finite in all three. `wide`: e and a in
    fp64 already (a big output is not widened twice)."""
    e64, a64 = wide or (e.double(), a.double())
    r64 = r.detach().to(e.device).double()
    finite = torch.isfinite(e64) & torch.isfinite(a64) & torch.isfinite(r64)
    if bool(finite.all()):  # the usual case: no masked copies
        finite = ...  # (Ellipsis: a 0-dim output too)
    elif not bool(finite.any()):
        return {}
    ulp, scale = _ulp(r64[finite], e.dtype), r64[finite].abs().clamp_min(torch.finfo(e.dtype).tiny)
    out = {}
    for who, x in (("eager", e64), ("compiled", a64)):
        err = (x[finite] - r64[finite]).abs()
        out.update({f"fp64_err_{who}": err.max().item(), f"fp64_ulp_{who}": (err / ulp).max().item(),
                    f"fp64_rel_{who}": (err / scale).max().item()})
    return out


def same_bits(e, a) -> bool:
    """Every bit equal (so every rung passes): one pass over a float output, where the ladder
    would make a dozen full-size fp64 temporaries. Most outputs of a big graph are like this."""
    ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}.get(e.element_size())
    if ints is None or e.is_complex() or e.dtype != a.dtype or e.shape != a.shape or e.device != a.device:
        return False
    return torch.equal(e.view(ints), a.view(ints))


def storage_overrun(t) -> int:
    """Bytes a strided tensor's view reaches past the end of its storage (0: within it). Eager
    never returns such a view (as_strided checks its bounds); a compiled one that does (an
    as_strided over a buffer Inductor made smaller) reads other memory, different on every run."""
    if t.layout != torch.strided or not t.numel() or t.device.type == "meta" or is_zero_tensor(t):
        return 0
    try:  # a wrapper subclass (DTensor, TwoTensor) has no storage of its own to read
        last = t.storage_offset() + sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
        return max(0, (last + 1) * t.element_size() - t.untyped_storage().nbytes())
    except (RuntimeError, NotImplementedError):
        return 0


def _fail(m, rung, why):
    m.update(ok=False, rung=rung, why=why)
    return m


def compare_tensor(name, expected, actual, reference, judging: Judging = Judging(), exact=False, aliases=None):
    """Metrics for one output and whether it passes; `rung` names the first rung it fails.
    `expected` is eager's value; `judging`: tolerances, strict, ignored rungs, bitwise (Judging);
    `exact`: eager computes this output exactly (a value-selecting op); `aliases`: (the input
    eager's output is a view of, compiled's), and the layout rung is checked only with them."""
    m = {"output": name, "dtype": str(expected.dtype).replace("torch.", ""), "shape": list(expected.shape)}
    if actual.shape != expected.shape or actual.dtype != expected.dtype or actual.device != expected.device:
        return _fail(m, "meta", f"shape/dtype/device {list(actual.shape)}/{actual.dtype}/{actual.device} != eager's "
                                f"{list(expected.shape)}/{expected.dtype}/{expected.device}")
    overrun = storage_overrun(actual)
    if overrun and not storage_overrun(expected):  # its values are whatever lies past the end: never read them
        return _fail(m, "meta", f"a view that reaches {overrun} bytes past the end of its storage "
                                f"({actual.untyped_storage().nbytes()} bytes; strides {tuple(actual.stride())}, "
                                f"offset {actual.storage_offset()}): it reads memory it does not own")
    e, a = expected.detach(), actual.detach()
    r = reference.detach() if reference is not None and reference.shape == e.shape else None
    if r is not None and r.device != e.device:
        r = r.to(e.device)
    floating = e.is_floating_point() or e.is_complex()
    failed = _judge_floats(m, e, a, r, judging, exact) if floating else _judge_integers(m, e, a, r, judging.strict)
    if failed is not None:
        return failed
    if aliases is not None and "layout" not in judging.ignore:
        why = _layout_difference(e, a, *aliases)
        if why:
            return _fail(m, "layout", why)
    if judging.bitwise and floating and e.numel():
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


def tolerances(dtype, judging: Judging) -> tuple:
    """(atol, rtol, rmse multiplier) for outputs of `dtype`: the dtype's, or the user's atol/rtol.
    The one place the rule is written: repro/checks.py writes the same numbers into repro.py."""
    d_atol, d_rtol, multiplier = TOLERANCES.get(dtype, DEFAULT_TOLERANCE)
    return (d_atol if judging.atol is None else judging.atol, d_rtol if judging.rtol is None else judging.rtol,
            multiplier)


def _only_nan_for_inf(bad, e64, a64) -> bool:
    """Eager NaN and compiled +-inf at every differing element: an indeterminate form (inf - inf
    in eager's Welford, inf // 0.5) that compiled resolved to a limit; the fuzzer lists it apart."""
    return bool((bad == (bad & e64.isnan() & a64.isinf())).all())


def _judge_floats(m, e, a, r, judging: Judging, exact):
    atol, rtol, multiplier = tolerances(e.dtype, judging)
    strict = judging.strict
    n = e.numel()
    if n and same_bits(e, a):
        m.update(max_abs_err=0.0, max_rel_err=0.0, mismatch_fraction=0.0, max_ulp=0.0)
        return None
    wide = torch.complex128 if e.is_complex() else torch.float64
    e64, a64 = e.to(wide), a.to(wide)
    # All finite (the usual case): no NaN/Inf patterns and no masks, a few passes fewer
    finite = bool(torch.isfinite(e).all()) and bool(torch.isfinite(a).all())
    pe, pa = (None, None) if finite else (_pattern(e64), _pattern(a64))
    differ, both = (None, None) if finite else (pe != pa, (pe == 0) & (pa == 0))
    err = (a64 - e64).abs() if finite else (a64 - e64).abs().masked_fill_(~both, 0)
    close = torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    mag = e64.abs() if finite else e64.abs().masked_fill_(~both, 1.0)  # relative errors where both are finite
    m.update(max_abs_err=err.max().item() if n else 0.0,
             max_rel_err=(err / mag.clamp_min(1e-12)).max().item() if n else 0.0,
             mismatch_fraction=(~close).double().mean().item() if n else 0.0,
             max_ulp=(err / (torch.finfo(e.dtype).eps * mag.clamp_min(torch.finfo(e.dtype).tiny))).max().item()
             if n else 0.0)
    del err, mag
    identical = m["max_abs_err"] == 0 if finite else \
        bool(((e64 == a64) | (pe == 1) & (pa == 1)).all()) and not bool(differ.any())
    if not identical and r is not None and not e.is_complex():
        m.update(fp64_evidence(e, a, r, (e64, a64)))
    if differ is not None and bool(differ.any()):  # rung nan_inf
        m["nonfinite_mismatch"] = int(differ.sum())
        explained = torch.zeros_like(differ)
        if not strict and r is not None:
            explained = differ & (_pattern(r.to(e.dtype).to(wide)) == pa)  # compiled agrees with fp64, eager does not
        if not bool((explained == differ).all()):
            bad = differ & ~explained
            m["nan_for_inf"] = _only_nan_for_inf(bad, e64, a64)
            return _fail(m, "nan_inf", f"NaN/Inf where eager has a finite value or the reverse at {int(bad.sum())} of "
                                       f"{n} elements (first {_first(bad, e, a)})")
        index = tuple(int(i) for i in differ.nonzero()[0]) if differ.dim() else ()
        m.update(numerics="nan_inf_fp64", nonfinite_example=f"{_first(differ, e, a)}, fp64 {_scalar(r[index])}")
    far = _within(both, ~close)
    if bool(far.any()):  # rung values
        finite_ref = r is not None and not e.is_complex()
        judged = _within(both, torch.isfinite(r.to(wide))) if finite_ref else None
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
        failed = _exact_rungs(m, (e, a), (e64, a64), both, judging)
        if failed is not None:
            return failed
    if not finite and not e.is_complex() and bool(((pe == 1) & (pa == 1) & (e.signbit() != a.signbit())).any()):
        m["numerics"] = m.get("numerics") or "nan_sign"
    return None


def _exact_rungs(m, given, wide, both, judging: Judging):
    """Rungs exact and signed_zero, of an output eager computes exactly: `given` (eager's,
    compiled's) and `wide` (both in fp64); `both`: where both are finite (None: everywhere)."""
    (e, a), (e64, a64), n = given, wide, given[0].numel()
    unequal = _within(both, a64 != e64)
    if bool(unequal.any()):  # rung exact
        return _fail(m, "exact", f"{int(unequal.sum())} of {n} elements differ from eager, which is exact here "
                                 f"(a value-selecting op; first {_first(unequal, e, a)})")
    if "signed_zero" not in judging.ignore:
        signs = (e64 == 0) & (a64 == 0) & (e.signbit() != a.signbit())
        if bool(signs.any()):
            return _fail(m, "signed_zero", f"the sign of zero differs at {int(signs.sum())} of {n} elements "
                                           f"(first {_first(signs, e, a)})")
    return None


def _within(mask, x):
    """`mask & x`, where a mask of None means everywhere."""
    return x if mask is None else mask & x


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
