"""The one oracle: a ladder of checks, and the one check every candidate goes through.

Detection, reduction, repro.py and generated tests all judge a run by `check`, so a failure is
judged the same way everywhere. A check answers `fail` (the compiled run raises, or a rung of
the ladder below differs), `pass`, or `invalid` (eager raises, eager is not deterministic, or
integer outputs differ only where eager itself misses the fp64 reference): an invalid candidate
is never a bug.

The ladder of rungs tried in order on every output (and every input the graph writes to), and
the metrics of each output: compiler/ladder.py. The first rung on which compiled and eager
differ names the failure, and is part of its signature.

A pass whose outputs still differ from eager (within tolerance, as close to fp64 as eager, a
NaN of another sign) is kind `numerics`, with the evidence in its metrics (`numerics_lines`).
"""
import math
import operator
from dataclasses import dataclass, field, replace

import torch

from compiler.context import without_tf32
from compiler.judging import Judging
from compiler.ladder import compare_tensor
from compiler.fp64_reference import Fp64Everywhere
from compiler.unified_writes import unified_writes
from compiler.grads import Backward, gradient_output
from compiler.rungs import RUNG_WORDS, RUNGS
from compiler.signature import exception_signature, ladder_signature
from compiler.tensor_kinds import copy_tensor, is_zero_tensor

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
    """One run on copies of the inputs: what it returned (and inputs it wrote, `input[i]`), what aliases inputs."""
    value: object
    aliases: dict  # output path -> index of the input whose storage it shares
    rewritten: frozenset = frozenset()  # `input[i]` written with the bits it held (its version changed alone)


def _storage(t):
    storage = None if is_zero_tensor(t) else t.untyped_storage()  # a ZeroTensor has none
    return (t.device, storage.data_ptr()) if storage is not None and storage.nbytes() else None


def run(fn, inputs) -> Run:
    """`fn` on copies of `inputs`; the gradients a backward pass inside `fn` left on the copies
    (compiler.grads.Backward) come back as outputs `grad[i]`, judged as the others are."""
    args = clone_inputs(inputs)
    versions = [_version(a) for a in args]
    out = fn(*args)
    # An input written to, even with the bits it held (eager's relu_ of values >= 0), is judged as
    # one: by its bits alone, a compiled run that wrote other values differed in structure only
    mutated = {f"input[{i}]": a for i, (a, b, v) in enumerate(zip(args, inputs, versions))
               if isinstance(a, torch.Tensor) and (_version(a) != v or not _same_bits(a.detach(), b.detach()))}
    mutated.update({f"grad[{i}]": _defined_gradient(a.grad, b) for i, (a, b) in enumerate(zip(args, inputs))
                    if isinstance(a, torch.Tensor) and a.requires_grad and a.grad is not None})
    rewritten = frozenset(k for k, a in mutated.items()
                          if k.startswith("input[") and _same_bits(a.detach(), inputs[int(k[6:-1])].detach()))
    value = {"out": out, **mutated} if mutated else out
    storages = {_storage(a): i for i, a in enumerate(args) if isinstance(a, torch.Tensor) and _storage(a)}
    aliases = {path: storages.get(_storage(v)) for path, v in flatten(value)
               if isinstance(v, torch.Tensor) and "input[" not in path}
    return Run(value, aliases, rewritten)


def _version(x):
    """A tensor's version counter (each in-place write bumps it, compiled or eager); None where
    there is none (not a tensor, an inference tensor)."""
    try:
        return x._version if isinstance(x, torch.Tensor) else None
    except RuntimeError:
        return None


def _defined_gradient(grad, x):
    """A gradient with NaN where its input is NaN: there the function has no derivative, and
    what a kernel gives is its own convention (eager's hardshrink/hardtanh/clamp backward give 0,
    their decompositions the incoming gradient, as `NaN >= lambd` is false either way)."""
    if not (grad.is_floating_point() and isinstance(x, torch.Tensor) and x.is_floating_point()
            and grad.shape == x.shape):
        return grad
    return grad.masked_fill(x.detach().isnan(), float("nan"))


def run_with_mutations(fn, inputs):
    """Run fn on a copy of inputs; return its outputs plus the inputs it wrote to."""
    return run(fn, inputs).value


def _same_bits(a, b):
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(torch.isclose(a, b, rtol=0, atol=0, equal_nan=True).all())
    return torch.equal(a, b)


def compare(expected, actual, reference=None, judging: Judging = Judging(), exact=(), aliases=None):
    """Per-leaf metrics for all outputs; `ok` only if every leaf passes. `judging`: tolerances,
    strict, ignored rungs (compiler.judging.Judging); `exact`: paths of outputs eager
    computes exactly; `aliases`: ({path: input} of eager, of compiled), without which layout is
    not compared."""
    exp, act = flatten(expected), flatten(actual)
    ref = flatten(reference) if reference is not None else [(p, None) for p, _ in exp]
    if [p for p, _ in exp] != [p for p, _ in act]:
        return False, [{"output": "structure", "ok": False, "rung": "meta", "why": "output structure differs"}]
    metrics = []
    grads = [gradient_output(p) is not None for p, _ in exp]
    if any(grads) and _forward_has_nan(exp, grads):  # backward through a NaN: no derivative there
        metrics = [{"output": p, "ok": True, "not_judged": "the forward holds NaN"} for (p, _), g in zip(exp, grads) if g]
        exp, act, ref = ([leaf for leaf, g in zip(leaves, grads) if not g] for leaves in (exp, act, ref))
    for (name, e), (_, a), (_, r) in zip(exp, act, ref):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            metrics.append(compare_tensor(name, e, a, r if isinstance(r, torch.Tensor) else None, judging,
                                          name in exact,
                                          None if aliases is None else (aliases[0].get(name), aliases[1].get(name))))
        elif isinstance(e, float) and isinstance(a, (int, float)):
            ok = math.isclose(e, a, rel_tol=1e-4, abs_tol=1e-5) or (math.isnan(e) and math.isnan(a))
            metrics.append({"output": name, "ok": ok, **({} if ok else {"rung": "values", "why": f"{a} != eager's {e}"})})
        else:
            ok = type(e) is type(a) and e == a
            rung = "values" if type(e) is type(a) else "meta"
            metrics.append({"output": name, "ok": ok, **({} if ok else {"rung": rung, "why": f"{a!r} != eager's {e!r}"})})
    return all(m["ok"] for m in metrics), metrics


def _forward_has_nan(leaves, grads: list) -> bool:
    """Eager's forward outputs (the leaves that are not gradients) hold a NaN. Where a forward value
    is NaN the function has no derivative, and what flows back through it is each kernel's
    convention (eager's vectorized hardshrink backward passes 0 there, Inductor the incoming
    gradient); summed over a broadcast, that reaches inputs that are not NaN themselves."""
    return any(isinstance(v, torch.Tensor) and v.is_floating_point() and bool(v.isnan().any())
               for (p, v), g in zip(leaves, grads) if not g and "input[" not in p)


def run_reference(model, inputs):
    """(fp64 outputs, name): every floating value computed in fp64 (compiler.fp64_reference),
    else the inputs alone widened (an op that refuses fp64), on the inputs' device, else on
    the CPU, else none (judge by eager)."""
    try:
        with Fp64Everywhere():
            return run_with_mutations(model, [to_fp64(x) for x in inputs]), "fp64"
    except Exception:
        pass
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


@dataclass
class Expected:
    """What a compiled run of a graph on its inputs is judged against: eager's run and the fp64
    reference. Both are deterministic (eager is checked to be), so runs that repeat the
    compiled one (the k-of-k flakiness rule) are judged against one Expected."""
    eager: Run
    reference: object
    ref_name: str
    exact: set  # the outputs eager computes exactly (exact_outputs)


def expected_of(model, inputs, seed=None) -> "Expected | Outcome":
    """Eager twice, then the fp64 reference; an invalid Outcome when eager raises or its two
    runs differ (the candidate is broken or random: never a compiler bug). TF32 is off for
    every judged run, eager's and compiled's alike (compiler.context.without_tf32)."""
    with without_tf32():
        return _expected_of(model, inputs, seed)


def _expected_of(model, inputs, seed=None) -> "Expected | Outcome":
    try:
        eager = _seeded(model, inputs, seed)
        again = _seeded(model, inputs, seed)
    except Exception as exc:  # the candidate itself is broken: not a compiler bug
        return Outcome("invalid", "eager_error", message=f"eager raised {type(exc).__name__}: {exc}"[:300])
    same, _ = compare(eager.value, again.value)
    del again  # not held while the fp64 reference runs: a big graph's outputs are large
    if not same:
        return Outcome("invalid", "nondeterministic", message="two eager runs differ (random or nondeterministic ops)")
    if seed is not None:
        torch.manual_seed(seed)
    reference, ref_name = run_reference(model, inputs)
    return Expected(eager, reference, ref_name, exact_outputs(model, eager.value))


def check(model, inputs, compiled, stage="inductor", atol=None, rtol=None, strict=False, seed=None, ignore=()):
    """Run eager (twice), an fp64 reference and the compiled model on copies of `inputs`, and
    climb the ladder. With `seed`, every run starts from the same RNG state (for graphs that
    draw random numbers); `strict`: tolerances alone, and the bitwise rung; `ignore`: rungs
    not to check (`signed_zero`, `layout`). A caller holding a Judging: `judged_check`."""
    return judged_check(model, inputs, compiled, stage, Judging(atol, rtol, strict, tuple(ignore)), seed)


def judged_check(model, inputs, compiled, stage: str, judging: Judging, seed=None) -> Outcome:
    """`check`, judged as `judging` says (the run's, carried whole from its options)."""
    return check_against(expected_of(model, inputs, seed), inputs, compiled, stage, judging, seed)


def check_against(expected: "Expected | Outcome", inputs, compiled, stage: str = "inductor",
                  judging: Judging = Judging(), seed=None) -> Outcome:
    """`check` with its eager runs and reference already made (`expected_of` of the same model,
    inputs and seed): only the compiled model runs, as when a run is repeated."""
    if isinstance(expected, Outcome):
        return replace(expected)  # a copy: each run's outcome is its own (a seeded recheck edits it)
    eager, ref_name = expected.eager, expected.ref_name
    try:
        with without_tf32():
            actual = _seeded(compiled, inputs, seed)
    except Exception as exc:
        kind, sig, msg = exception_signature(exc, stage)
        return Outcome("fail", kind, sig, msg, reference=ref_name, rung="exception")
    eager_value, actual_value, reference = unified_writes(eager.value, eager.rewritten, actual.value,
                                                          actual.rewritten, expected.reference)
    reference = _matching(reference, eager_value)
    _, metrics = compare(eager_value, actual_value, reference, judging, expected.exact,
                         (eager.aliases, actual.aliases))
    return outcome_of(metrics, stage, ref_name)


def outcome_of(metrics: list, stage: str, ref_name: str = "") -> Outcome:
    """The Outcome of compared outputs: the first rung any output fails, else a pass (kind
    `numerics` when outputs still differ from eager, with the evidence in the metrics)."""
    failing = [m for m in metrics if not m["ok"] and not m.get("noise")]
    forward = [m for m in failing if gradient_output(m.get("output", "")) is None]
    failing = forward or failing  # a gradient is a finding of its own only where the outputs are right
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

    if isinstance(model, Backward):  # the forward function's graph says which outputs are exact
        model = model.fn
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
    extra = any("input[" in p or "grad[" in p for p, _ in base)  # run() put the outputs under "out"
    prefix = "out['out']" if isinstance(value, dict) and "out" in value and extra else "out"
    return {path for path, node in flatten(returned, prefix) if node in exact}
