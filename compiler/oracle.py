"""The one accuracy oracle, and the one check every candidate goes through.

Detection, reduction, repro.py and generated tests all call `check`, so a failure is judged
the same way everywhere. A check answers one of three things: `fail` (the compiled run
raises, or its outputs are wrong), `pass`, or `invalid` (eager raises, eager is not
deterministic, eager yields NaN/Inf in a compared output): an invalid candidate is never a bug.

Floating outputs: equal, or allclose with dtype-aware tolerances, or (as
torch._dynamo.utils.same does) compiled error vs an fp64 reference within a multiple of
eager's own error. Integer and bool outputs: exact.

Standalone on purpose (stdlib + torch only): repro.py embeds this file verbatim.
"""
import math
from dataclasses import dataclass, field

import torch

from compiler.signature import accuracy_signature, exception_signature  # minify: embed-skip

# dtype -> (atol, rtol, rmse multiplier)
TOLERANCES = {
    torch.float64: (1e-7, 1e-7, 2.0),
    torch.float32: (1e-4, 1e-4, 2.0),
    torch.float16: (1e-3, 1e-3, 3.0),
    torch.bfloat16: (1e-2, 1e-2, 3.0),
}


@dataclass
class Outcome:
    status: str  # "fail" | "pass" | "invalid"
    kind: str = ""  # compile_error | runtime_error | accuracy | crash | hang | eager_error | ...
    signature: str = ""
    message: str = ""
    metrics: list = field(default_factory=list)
    reference: str = ""  # what the compiled values were judged against: "fp64" or "eager"


def flatten(value, path="out"):
    """Leaves of nested tuples/lists/dicts, with their paths."""
    if isinstance(value, (tuple, list)):
        return [leaf for i, v in enumerate(value) for leaf in flatten(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [leaf for k in sorted(value, key=str) for leaf in flatten(value[k], f"{path}[{k!r}]")]
    return [(path, value)]


def clone_input(x):
    """An exact copy: same dtype, shape, strides, storage offset, requires_grad."""
    if not isinstance(x, torch.Tensor):
        return x
    storage = x.detach().untyped_storage().clone()
    out = torch.empty(0, dtype=x.dtype, device=x.device).set_(storage, x.storage_offset(), x.size(), x.stride())
    return out.requires_grad_(x.requires_grad) if x.is_leaf and x.requires_grad else out


def clone_inputs(inputs):
    return [clone_input(x) for x in inputs]


def to_fp64(x):
    if isinstance(x, torch.Tensor) and x.is_floating_point():
        return clone_input(x).detach().to(torch.float64).requires_grad_(x.requires_grad)
    return clone_input(x)


def run_with_mutations(fn, inputs):
    """Run fn on a copy of inputs; return its outputs plus the inputs it wrote to."""
    args = clone_inputs(inputs)
    out = fn(*args)
    mutated = {f"input[{i}]": a for i, (a, b) in enumerate(zip(args, inputs))
               if isinstance(a, torch.Tensor) and not _same_bits(a.detach(), b.detach())}
    return {"out": out, **mutated} if mutated else out


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
    r = reference.detach().to(eager.dtype)
    diff = eager != actual
    eager_off, compiled_off = int((eager != r).sum()), int((actual != r).sum())
    return bool((actual[diff] == r[diff]).all()) or (0 < compiled_off <= 2 * eager_off)


def compare_tensor(name, expected, actual, reference, atol=None, rtol=None, strict=False):
    """Metrics for one output and whether it passes. `expected` is eager's value; `strict`
    judges by the tolerances alone (no fp64 error-ratio leniency, no noise explanation)."""
    m = {"output": name, "dtype": str(expected.dtype).replace("torch.", ""), "shape": list(expected.shape)}
    if actual.shape != expected.shape or actual.dtype != expected.dtype:
        m.update(ok=False, why=f"shape/dtype {list(actual.shape)}/{actual.dtype} != {list(expected.shape)}/{expected.dtype}")
        return m
    e, a = expected.detach(), actual.detach()
    if not (e.is_floating_point() or e.is_complex()):
        diff = e != a
        m.update(ok=not bool(diff.any()), mismatch_fraction=diff.float().mean().item() if e.numel() else 0.0,
                 max_abs_err=(e.double() - a.double()).abs().max().item() if e.numel() else 0.0)
        if not m["ok"] and not strict and _integer_noise(e, a, reference):
            m["noise"] = True
        return m
    d_atol, d_rtol, multiplier = TOLERANCES.get(e.dtype, (1e-4, 1e-4, 2.0))
    atol, rtol = (d_atol if atol is None else atol), (d_rtol if rtol is None else rtol)
    e64, a64 = e.double(), a.double()
    finite = torch.isfinite(e64)
    close = torch.isclose(a64, e64, rtol=rtol, atol=atol, equal_nan=True)
    # Unjudgeable only where they differ at a NaN/Inf of eager's: a NaN both produce (a fully
    # masked softmax row) leaves the finite values to be judged.
    m["eager_nonfinite"] = bool((~finite & ~close).any())
    err = (a64 - e64).abs()
    err = torch.where(finite & torch.isfinite(a64), err, torch.where(close, 0.0, math.inf))
    m.update(max_abs_err=err.max().item() if e.numel() else 0.0,
             max_rel_err=(err / e64.abs().clamp_min(1e-12)).max().item() if e.numel() else 0.0,
             mismatch_fraction=(~close).double().mean().item() if e.numel() else 0.0,
             max_ulp=(err / (torch.finfo(e.dtype).eps * e64.abs().clamp_min(torch.finfo(e.dtype).tiny))).max().item()
             if e.numel() else 0.0)
    if bool(close.all()):
        m["ok"] = True
        return m
    both = finite & torch.isfinite(a64)
    judgeable = reference is not None and reference.shape == e.shape and bool((both | close).all())
    if not strict and judgeable:  # they differ only where both are finite: judge those against fp64
        r = reference.detach().double()[both]
        err_compiled, err_eager = _rmse(a64[both], r), _rmse(e64[both], r)
        m.update(rmse_compiled=err_compiled, rmse_eager=err_eager,
                 rmse_ratio=err_compiled / err_eager if err_eager else math.inf)
        m["ok"] = err_compiled <= multiplier * err_eager + atol / 10
        return m
    m["ok"] = False
    return m


def compare(expected, actual, reference=None, atol=None, rtol=None, strict=False):
    """Per-leaf metrics for all outputs; `ok` only if every leaf passes."""
    exp, act = flatten(expected), flatten(actual)
    ref = flatten(reference) if reference is not None else [(p, None) for p, _ in exp]
    if [p for p, _ in exp] != [p for p, _ in act]:
        return False, [{"output": "structure", "ok": False, "why": "output structure differs"}]
    metrics = []
    for (name, e), (_, a), (_, r) in zip(exp, act, ref):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            metrics.append(compare_tensor(name, e, a, r if isinstance(r, torch.Tensor) else None, atol, rtol, strict))
        elif isinstance(e, float) and isinstance(a, (int, float)):
            metrics.append({"output": name, "ok": math.isclose(e, a, rel_tol=1e-4, abs_tol=1e-5)})
        else:
            metrics.append({"output": name, "ok": type(e) is type(a) and e == a})
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


def _seeded(fn, inputs, seed):
    if seed is not None:
        torch.manual_seed(seed)
    return run_with_mutations(fn, inputs)


def check(model, inputs, compiled, stage="inductor", atol=None, rtol=None, strict=False, seed=None):
    """Run eager (twice), an fp64 reference and the compiled model on copies of `inputs`.
    With `seed`, every run starts from the same RNG state (for graphs that draw random numbers)."""
    try:
        eager = _seeded(model, inputs, seed)
        again = _seeded(model, inputs, seed)
    except Exception as exc:  # the candidate itself is broken: not a compiler bug
        return Outcome("invalid", "eager_error", message=f"eager raised {type(exc).__name__}: {exc}"[:300])
    same, _ = compare(eager, again)
    if not same:
        return Outcome("invalid", "nondeterministic", message="two eager runs differ (random or nondeterministic ops)")
    if seed is not None:
        torch.manual_seed(seed)
    reference, ref_name = run_reference(model, inputs)
    try:
        actual = _seeded(compiled, inputs, seed)
    except Exception as exc:
        kind, sig, msg = exception_signature(exc, stage)
        return Outcome("fail", kind, sig, msg, reference=ref_name)
    reference = _matching(reference, eager)
    ok, metrics = compare(eager, actual, reference, atol, rtol, strict)
    if ok:
        return Outcome("pass", metrics=metrics, reference=ref_name)
    bad = [m for m in metrics if not m["ok"]]
    if any(m.get("eager_nonfinite") for m in bad):
        return Outcome("invalid", "eager_nonfinite", message="eager yields NaN/Inf where compiled differs",
                       metrics=metrics, reference=ref_name)
    if all(m.get("noise") for m in bad):
        return Outcome("invalid", "fp_noise", metrics=metrics, reference=ref_name,
                       message=f"{', '.join(m['output'] for m in bad)}: integer/bool differences only where eager "
                               f"itself misses the fp64 reference (rounding near a threshold), not a bug")
    worst = bad[0]
    msg = f"{worst['output']} ({worst.get('dtype', '?')}) differs from eager: " + ", ".join(
        f"{k}={worst[k]:.3g}" for k in ("max_abs_err", "mismatch_fraction", "rmse_ratio") if k in worst)
    if "why" in worst:
        msg = f"{worst['output']}: {worst['why']}"
    return Outcome("fail", "accuracy", accuracy_signature(stage), msg, metrics, ref_name)


def _matching(reference, eager):
    """The reference only where its structure matches eager's (else compare without it)."""
    if reference is None:
        return None
    ref, exp = flatten(reference), flatten(eager)
    return reference if [p for p, _ in ref] == [p for p, _ in exp] else None
