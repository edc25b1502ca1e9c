"""The check repro.py makes, in plain torch: the lines of its main block (or, for
`minify test-from`, the body of `def check()`), for the oracle's rung that fired
(compiler/ladder.py): `torch.isclose` with the tolerances used (and compiled's RMSE against an
fp64 run, which must exceed eager's, unless --strict), `torch.equal`, a NaN/Inf pattern, a
signbit comparison, a stride comparison, bits. Compile errors and runtime errors: does
compiling and running raise. Crashes and hangs: the compiled run happens in a child process
(the script itself, with `--compiled-run`). Each prints `REPRODUCED: ...` (exit 1) or
`NOT REPRODUCED: ...` (exit 0); as a function, returns what differs or None."""
from __future__ import annotations

import re
from dataclasses import dataclass

import torch
import torch.fx as fx

from compiler.ladder import tolerances
from compiler.oracle import exact_outputs, run
from compiler.signature import rung_of
from compiler.user_kernels import launched_inputs
from repro.info import ReproInfo

SMALL = 4  # outputs with at most this many elements are printed whole in the verdict line
AOTI = "aoti"  # the backend name of an AOTInductor failure's repro (compiler/aoti_compile.py)
# repro.py's compile of an AOTInductor failure: `f` exported, compiled ahead of time, its package loaded
AOTI_HELPER = '''class Exported(torch.nn.Module):
    def forward(self, *args):
        return f(*args)


def aoti_compile(f):
    """f as a deployment runs it: torch.export.export, aoti_compile_and_package, aoti_load_package."""
    def run(*args):
        ep = torch.export.export(Exported(), tuple(args))
        with tempfile.TemporaryDirectory() as folder:
            path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(folder, "repro.pt2"))
            package = torch._inductor.aoti_load_package(path)
        return package(*args)
    return run'''
CHILD_TIMEOUT = 300  # seconds before the compiled run of a crash repro counts as hanging
COLD_START = 60  # a hang repro's child is a fresh process: its start and cold compile, beyond the run's limit
CRASHING = ("crash", "hang")
RAISING = ("compile_error", "runtime_error")


@dataclass
class Facts:
    """What one eager run of the graph shows, for writing its check."""
    outputs: list  # eager's value of each returned leaf (top level)
    single: bool  # forward returns one value, not a tuple
    mutated: list  # indices of inputs the graph writes to
    exact: list  # indices of outputs eager computes exactly (value-selecting ops)
    aliased: bool  # an output is a view of an input
    scalars: bool = False  # some inputs are not tensors


def eager_facts(gm: fx.GraphModule, inputs: list, context: dict) -> Facts:
    output = next(iter(gm.graph.find_nodes(op="output"))).args[0]
    single = not isinstance(output, (tuple, list))
    try:
        with torch.no_grad():
            done = run(gm, inputs)
    except Exception:  # eager fails on these inputs: write the plainest check
        return Facts([], single, [], [], False, not all(isinstance(x, torch.Tensor) for x in inputs))
    value = done.value
    mutated = []
    if isinstance(value, dict) and "out" in value and any(str(k).startswith("input[") for k in value):
        mutated = sorted(int(k[6:-1]) for k in value if str(k).startswith("input["))
        value = value["out"]
    mutated = sorted(set(mutated) | set(launched_inputs(gm)))  # a user kernel's writes may leave values as they were
    outputs = [value] if single else list(value)
    paths = exact_outputs(gm, outputs[0] if single else tuple(outputs))
    exact = [i for i in range(len(outputs)) if ("out" if single else f"out[{i}]") in paths]
    return Facts(outputs, single, mutated, exact, any(v is not None for v in done.aliases.values()),
                 not all(isinstance(x, torch.Tensor) for x in inputs))


def compile_call(info: ReproInfo) -> str:
    if info.setup.spec.backend == AOTI:  # an AOTInductor package: AOTI_HELPER in repro.py
        return "aoti_compile(f)"
    kwargs = info.setup.spec.compile_kwargs(info.stage)
    shown = {k: v for k, v in kwargs.items() if not (k == "backend" and v == "inductor")}
    call = "torch.compile(f" + "".join(f", {k}={v!r}" for k, v in shown.items()) + ")"
    # CUDA graphs: the bug shows at a later call; PRIMED_HELPER (compiler/cudagraphs.py) in repro.py
    return f"primed({call}, {info.setup.calls_before})" if info.setup.calls_before else call


def modes(info: ReproInfo, device: str) -> str:
    """The `with` of the run context (empty: none)."""
    items = [] if info.setup.spec.grad_enabled else ["torch.no_grad()"]
    if info.setup.context.get("inference_mode"):
        items.append("torch.inference_mode()")
    autocast = info.setup.context.get("autocast")
    if autocast:
        items.append(f"torch.autocast({device!r}, dtype=torch.{autocast['dtype']})")
    return ", ".join(items)


class Lines:
    """Source lines with an indentation level."""

    def __init__(self):
        self.lines: list[str] = []
        self.depth = 0

    def add(self, *texts: str) -> "Lines":
        self.lines += ["    " * self.depth + t if t else "" for t in texts]
        return self

    def text(self) -> str:
        return "\n".join(self.lines)


def _show(small: bool) -> str:
    return "compiled {a.tolist()}, eager {e.tolist()}" if small else "{where(bad, e, a)}"


WHERE_HELPER = '''\
def where(bad, e, a):
    i = tuple(bad.nonzero()[0].tolist())  # the first marked element
    return f"{bad.sum().item()} of {bad.numel()} elements, first at {i}: compiled {a[i].item()!r}, eager {e[i].item()!r}"'''


def _rung_check(out: Lines, rung: str, info: ReproInfo, facts: Facts, small: bool, report) -> None:
    """The lines that decide, for one output `e` (eager) / `a` (compiled) / `r` (fp64), whether
    the rung differs, and `report(message)` where it does."""
    show = _show(small)
    if rung == "meta":
        out.add("if (a.shape, a.dtype, a.device) != (e.shape, e.dtype, e.device):")
        report('shape/dtype/device {tuple(a.shape)}/{a.dtype}/{a.device}, eager\'s {tuple(e.shape)}/{e.dtype}/{e.device}')
        out.add("end = lambda t: (t.storage_offset() + sum((n - 1) * s for n, s in zip(t.shape, t.stride())) + 1) "
                "* t.element_size() if t.numel() else 0  # bytes its view reaches",
                "if end(a) > a.untyped_storage().nbytes() and end(e) <= e.untyped_storage().nbytes():")
        report("a view of {end(a)} bytes over a storage of {a.untyped_storage().nbytes()}: it reads memory it "
               "does not own")
    elif rung == "nan_inf":
        out.add("bad = (a.isnan() != e.isnan()) | (a.isposinf() != e.isposinf()) | (a.isneginf() != e.isneginf())",
                "if bad.any():")
        report("NaN/Inf where eager has a number, or the reverse: " + show)
    elif rung == "values":
        _values_check(out, info, facts, small, report)
    elif rung == "exact":
        out.add("bad = (a != e) & ~(a.isnan() & e.isnan())", "if bad.any():")
        report("differs where eager is exact (the op returns values of its inputs): " + show)
    elif rung == "signed_zero":
        out.add("bad = (a == 0) & (e == 0) & (a.signbit() != e.signbit())", "if bad.any():")
        report("the sign of zero differs from eager's: " + show)
    elif rung == "layout":
        if facts.aliased or re.search(r"view of input|storage offset", info.message):
            out.add("view = lambda t, inputs: [k for k, x in enumerate(inputs) if isinstance(x, torch.Tensor) "
                    "and x.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()]",
                    "if view(a, inputs_a) != view(e, inputs_e) or (view(e, inputs_e) and a.storage_offset() != "
                    "e.storage_offset()):")
            report("a view of inputs {view(a, inputs_a)} at offset {a.storage_offset()}, eager's of "
                   "{view(e, inputs_e)} at {e.storage_offset()}")
        out.add("significant = lambda t: [s for s, n in zip(t.stride(), t.shape) if n > 1]  # strides of dims > 1",
                "if a.numel() and significant(a) != significant(e):")
        report("strides {a.stride()}, eager's {e.stride()} (the values are equal)")
    elif rung == "bitwise":
        out.add("bad = ~(((a == e) & (a.signbit() == e.signbit())) | (a.isnan() & e.isnan()))", "if bad.any():")
        report("bits differ from eager's: " + show)
    else:
        raise ValueError(f"no check for rung {rung!r}")


def _values_check(out: Lines, info: ReproInfo, facts: Facts, small: bool, report) -> None:
    """The values rung of _rung_check: beyond minify's tolerances, and (unless strict) further from
    fp64 than eager, as the oracle judges it (compiler/ladder.py)."""
    show = _show(small)
    floats = sorted({v.dtype for v in facts.outputs if isinstance(v, torch.Tensor) and v.is_floating_point()},
                    key=str)
    ints = any(isinstance(v, torch.Tensor) and not v.is_floating_point() for v in facts.outputs)
    if not floats:
        out.add("if not torch.equal(a, e):" if small else "bad = a != e", *([] if small else ["if bad.any():"]))
        report("differs from eager: " + show)
        return
    if len(floats) == 1 and not ints:
        atol, rtol, times = tolerances(floats[0], info.judging)
        close = f"torch.isclose(a, e, atol={atol:g}, rtol={rtol:g}, equal_nan=True)"
    else:
        table = {str(d): tolerances(d, info.judging) for d in floats}
        out.add(f"atol, rtol, times = {{{', '.join(f'{d}: {t!r}' for d, t in table.items())}}}"
                f".get(e.dtype, (0, 0, 0))  # minify's tolerances by dtype")
        close = "torch.isclose(a, e, atol=atol, rtol=rtol, equal_nan=True)"
        atol, times = "atol", "times"
    out.add(f"bad = ~{close}  # minify's tolerances for {', '.join(str(d)[6:] for d in floats)}")
    if info.judging.strict:
        out.add("if bad.any():")
        report("differs from eager beyond tolerance: " + show)
        return
    out.add("fine = e.isfinite() & a.isfinite() & r.isfinite()",
            "unjudged = (bad & e.isfinite() & a.isfinite() & ~r.isfinite()).any()  # fp64 has no number there",
            "error = lambda x: (x.double() - r)[fine].square().mean().sqrt().item()  # RMSE against fp64",
            f"if bad.any() and (not e.is_floating_point() or unjudged or error(a) > {times} * error(e) + {atol} / 10):"
            if ints else f"if bad.any() and (unjudged or error(a) > {times} * error(e) + {atol} / 10):")
    report("beyond tolerance, and further from fp64 than eager: " + show)


def accuracy_check(info: ReproInfo, facts: Facts, device: str, function: bool) -> tuple[list[str], bool]:
    """The main block (or, with `function`, the body of `def check()`) of a wrong-answer repro,
    and whether it needs the `where` helper."""
    rung = rung_of(info.signature)
    out = Lines()
    if not function:
        out.add('if __name__ == "__main__":')
        out.depth += 1
    if info.setup.context.get("deterministic"):
        out.add("torch.use_deterministic_algorithms(True)")
    tensors = [i for i, v in enumerate(facts.outputs) if isinstance(v, torch.Tensor)]
    checked = facts.exact if rung in ("exact", "signed_zero") and facts.exact else tensors
    small = all(facts.outputs[i].numel() <= SMALL for i in checked) if facts.outputs else True
    reference = rung == "values" and not info.judging.strict and \
        any(facts.outputs[i].is_floating_point() for i in checked if isinstance(facts.outputs[i], torch.Tensor))
    keep_inputs = bool(facts.mutated) or (rung == "layout" and (facts.aliased or "view of input" in info.message))
    _run_lines(out, info, facts, device, keep_inputs, reference)
    label = _loop_lines(out, facts, checked, reference)

    def report(message: str) -> None:
        text = f'{label} ({{e.dtype}}): {message}'
        if function:
            out.add(f'    return f"{text}"')
        else:
            out.add(f'    print(f"REPRODUCED: {text}")', "    raise SystemExit(1)")

    _rung_check(out, rung, info, facts, small, report)
    out.depth -= 1
    if function:
        out.add("return None")
    else:
        out.add('print("NOT REPRODUCED: compiled matches eager")')
    return out.lines, not small and "{where(bad, e, a)}" in out.text()


def _run_lines(out: Lines, info: ReproInfo, facts: Facts, device: str, keep_inputs: bool, reference: bool) -> None:
    """The runs: eager into `expected`, compiled into `actual` (outputs, then the inputs they
    write to), and with `reference` the graph in float64 into `reference`; in the run context."""
    with_ = modes(info, device)
    if with_:
        out.add(f"with {with_}:")
        out.depth += 1
    seed = [f"torch.manual_seed({info.seed})"] if info.seed is not None else []
    calls = {"e": "f", "a": compile_call(info)}
    if keep_inputs:
        out.add("inputs_e, inputs_a = make_inputs(), make_inputs()")
    runs = []
    for who, name in (("e", "expected"), ("a", "actual")):
        args = f"inputs_{who}" if keep_inputs else "make_inputs()"
        call = f"{calls[who]}(*{args})"
        if facts.single:
            call = f"[{call}, *{args}]" if facts.mutated else f"[{call}]"
        elif facts.mutated:
            call = f"[*{call}, *{args}]"
        runs.append((name, call))
    together = f"{runs[0][0]}, {runs[1][0]} = {runs[0][1]}, {runs[1][1]}"
    if not seed and not facts.mutated and len(together) + 4 * (out.depth + 1) <= 110:
        out.add(together)
    else:
        for name, call in runs:
            out.add(*seed, f"{name} = {call}" + ("  # outputs, then the inputs it writes to" if facts.mutated else ""))
    if reference:
        call = "f(*fp64)"
        floating = "isinstance(x, torch.Tensor) and x.is_floating_point()" if facts.scalars else "x.is_floating_point()"
        out.add(f"fp64 = [x.double() if {floating} else x for x in make_inputs()]")
        call = f"[{call}{', *fp64' if facts.mutated else ''}]" if facts.single else \
            f"[*{call}, *fp64]" if facts.mutated else call
        out.add(*seed, f"reference = {call}  # the same graph in float64")
    if with_:
        out.depth -= 1


def _loop_lines(out: Lines, facts: Facts, checked: list, reference: bool) -> str:
    """The loop over the checked outputs (and written inputs), binding `e`, `a` (and `r`) in
    its body, one level deeper; returns how the verdict line names the output."""
    n_out = len(facts.outputs)
    pairs = [(i, f"out[{i}]") for i in checked] + [(n_out + k, f"input[{k}]") for k in facts.mutated]
    if not facts.outputs or (checked == list(range(n_out)) and not facts.mutated):
        zipped = "zip(expected, actual, reference)" if reference else "zip(expected, actual)"
        out.add(f"for i, ({'e, a, r' if reference else 'e, a'}) in enumerate({zipped}):")
        out.depth += 1
        return "out[{i}]"
    out.add(f"for i, name in {tuple(pairs)!r}:")
    out.depth += 1
    out.add("e, a" + (", r" if reference else "") + " = expected[i], actual[i]" +
            (", reference[i]" if reference else ""))
    return "{name}"


def raising_check(info: ReproInfo, device: str, function: bool) -> list[str]:
    out = Lines()
    if not function:
        out.add('if __name__ == "__main__":')
        out.depth += 1
    with_ = modes(info, device)
    out.add("try:")
    out.depth += 1
    # CUDA reports a device-side assert at the next synchronization, not at the launch
    run = [f"{compile_call(info)}(*make_inputs())"] + (["torch.cuda.synchronize()"] if device != "cpu" else [])
    out.add(*([f"with {with_}:"] + [f"    {line}" for line in run] if with_ else run))
    out.depth -= 1
    out.add("except Exception as error:  # compiling or running the compiled code raises")
    out.add("    inner = getattr(error, 'inner_exception', None) or error.__cause__ or error  # what Dynamo wraps",
            "    what = f\"{type(inner).__name__}: {(str(inner).strip().splitlines() or [''])[0]}\"")
    if function:
        out.add("    return what", "return None")
    else:
        out.add('    print(f"REPRODUCED: {what}")', "    raise SystemExit(1)",
                'print("NOT REPRODUCED: compiling and running raise nothing")')
    return out.lines


def crashing_check(info: ReproInfo, device: str, function: bool) -> list[str]:
    """The parent's side: run the compiled call in a child (this file, `--compiled-run`)."""
    out = Lines()
    if not function:
        out.add('if __name__ == "__main__":')
        out.depth += 1
        out.add(*child_block(info, device))
        out.add("make_inputs()  # inputs that cannot be built or loaded: no verdict, not the child's crash")
    # An AOTInductor repro's child starts as this process did (minus its arguments): under a control
    # run that turns AOTInductor off in-process (compiler/boot/control_run.py), the child is one too
    command = ("[sys.executable, *sys.orig_argv[1:len(sys.orig_argv) - len(sys.argv) + 1], '--compiled-run']"
               if info.setup.spec.backend == AOTI else "[sys.executable, __file__, '--compiled-run']")
    limit = child_limit(info)
    out.add("try:",
            f"    child = subprocess.run({command}, capture_output=True, timeout={limit})",
            "except subprocess.TimeoutExpired:")
    died = ["if child.returncode < 0 or child.returncode > 1:  # killed by a signal, or aborted",
            "    how = signal.Signals(-child.returncode).name if child.returncode < 0 else "
            "f'exit status {child.returncode}'"]
    if function:
        out.add(f"    return 'hang: the compiled run did not finish within {limit} s'", *died,
                "    return f'crash: the compiled run died of {how}'", "return None")
    else:
        out.add(f"    print('REPRODUCED: hang: the compiled run did not finish within {limit} s')",
                "    raise SystemExit(1)", *died,
                "    print(f'REPRODUCED: crash: the compiled run died of {how}')", "    raise SystemExit(1)",
                "print(f'NOT REPRODUCED: the compiled run ended with exit status {child.returncode}')")
    return out.lines


def child_limit(info: ReproInfo) -> int:
    """Seconds the child's compiled run may take: a hang's, the limit the run judged it by (the
    user's --hang-timeout) and a fresh process's start; a crash's, long, as it ends by itself."""
    return CHILD_TIMEOUT if info.hang_limit is None else round(info.hang_limit + COLD_START)


def child_block(info: ReproInfo, device: str) -> list[str]:
    """The child of a crash/hang repro: compile and run, which kills this process while the bug is there."""
    with_ = modes(info, device)
    run_line = f"{compile_call(info)}(*make_inputs())"
    return ["if sys.argv[1:] == ['--compiled-run']:  # the child: a crash kills only this process",
            *([f"    with {with_}:", f"        {run_line}"] if with_ else [f"    {run_line}"]),
            "    raise SystemExit(0)"]


def check_lines(info: ReproInfo, facts: Facts, device: str, function: bool) -> tuple[list[str], bool]:
    if info.kind in CRASHING:
        return crashing_check(info, device, function), False
    if info.kind in RAISING:
        return raising_check(info, device, function), False
    return accuracy_check(info, facts, device, function)
