"""Write repro.py: one file that shows the bug and checks it in plain torch.

What it holds, in order: a two- or three-line header (what fails, where it came from, the
versions), the imports, the Inductor config the script changed and any planted bug (inline),
the minimized graph as a function `f` (shapes and dtypes in comments), `make_inputs` (inline
literals, or one tensor file beside it loaded with `weights_only=True`), and a main block that
runs eager and compiled and makes the check of the oracle's rung that fired (compiler/ladder.py):
`torch.isclose` with the tolerances used (and compiled's RMSE against an fp64 run, which must
exceed eager's, unless --strict), `torch.equal`, a NaN/Inf pattern, a signbit comparison, a
stride comparison, bits. Compile errors and runtime errors: does compiling and running raise.
Crashes and hangs: the compiled run happens in a child process (the script itself, with
`--compiled-run`). `python repro.py` prints one line, `REPRODUCED: ...` (exit 1) or
`NOT REPRODUCED: ...` (exit 0). The same check, as a function, goes into repro.json for
`minify test-from` (repro/testgen.py); the tool itself judges a folder with its own oracle
from repro.json (repro/runner.py).
"""
from __future__ import annotations

import platform
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.fx as fx

from compiler.config_snapshot import config_lines
from compiler.graph_code import forward_source, placeholders
from compiler.inject import injection_source
from compiler.ladder import DEFAULT_TOLERANCE, TOLERANCES
from compiler.oracle import exact_outputs, run
from compiler.rungs import RUNG_WORDS
from compiler.signature import rung_of
from compiler.stages import CompileSpec
from repro.annotate import annotate_forward, describe_run
from repro.inputs import describe, plan_inputs, save_inputs
from repro.manifest import REPRO, write_manifest

INPUTS_FILE = "inputs.pt"
WIDTH = 110  # header comment lines
SMALL = 4  # outputs with at most this many elements are printed whole in the verdict line
CHILD_TIMEOUT = 300  # seconds before the compiled run of a crash/hang repro counts as hanging
CRASHING = ("crash", "hang")
RAISING = ("compile_error", "runtime_error")


@dataclass
class ReproInfo:
    signature: str
    kind: str
    stage: str
    message: str
    spec: CompileSpec
    injections: list  # compiler.inject specs (anything injection_source accepts)
    source: str  # where the graph came from, for the header
    atol: float | None = None
    rtol: float | None = None
    strict: bool = False  # the oracle judged floats by the tolerances alone, and bit for bit
    seed: int | None = None  # the oracle re-seeded every run from this (graphs that draw random numbers)
    context: dict = field(default_factory=dict)  # inference_mode, autocast {"dtype": ...}, deterministic
    script: str = ""  # the user's script, for names of generated tests and the issue text
    graph: int | None = None  # index of the failing graph in the script
    ignore: tuple = ()  # rungs of the ladder the user turned off


@dataclass
class ReproParts:
    text: str
    saved: list  # inputs that go to INPUTS_FILE (empty: all inline)
    manifest: dict


def write_repro(folder: Path, gm: fx.GraphModule, inputs: list, info: ReproInfo) -> Path:
    """repro.py, the inputs file when needed, and repro.json, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    parts = build(gm, inputs, info)
    for stale in folder.glob("_minify_oracle_*.py"):  # the sidecar of earlier versions
        stale.unlink()
    if parts.saved:
        save_inputs(parts.saved, folder / INPUTS_FILE)
    else:
        (folder / INPUTS_FILE).unlink(missing_ok=True)
    path = folder / REPRO
    path.write_text(parts.text)
    write_manifest(folder, parts.manifest)
    return path


def render(gm: fx.GraphModule, inputs: list, info: ReproInfo) -> str:
    return build(gm, inputs, info).text


def input_device(inputs: list) -> str:
    return next((x.device.type for x in inputs if isinstance(x, torch.Tensor)), "cpu")


def bound_name(line: str) -> str:
    """The name an import-block line binds: `import a.b as c` -> c, `from m import x` -> x, `N = ...` -> N."""
    if " as " in line:
        return line.rsplit(" as ", 1)[1].strip()
    if line.startswith(("import ", "from ")):
        return line.split()[-1]
    return line.split("=", 1)[0].strip()


def used_imports(imports: str, code: str) -> list[str]:
    """Lines of FX's import block that bind a name `code` uses (plus `import torch`)."""
    return [line for line in imports.splitlines()
            if line == "import torch" or re.search(rf"\b{re.escape(bound_name(line))}\b", code)]


def tolerance(info: ReproInfo, dtype: torch.dtype) -> tuple[float, float, float]:
    atol, rtol, multiplier = TOLERANCES.get(dtype, DEFAULT_TOLERANCE)
    return (atol if info.atol is None else info.atol), (rtol if info.rtol is None else info.rtol), multiplier


def oracle_summary(info: ReproInfo, dtypes: list) -> str:
    """How the oracle judges these outputs, in words."""
    parts = []
    if any(not (d.is_floating_point or d.is_complex) for d in dtypes):
        parts.append("integer/bool outputs exact")
    for d in sorted({d for d in dtypes if d.is_floating_point}, key=str):
        atol, rtol, multiplier = tolerance(info, d)
        text = f"{str(d).replace('torch.', '')} allclose(atol={atol:g}, rtol={rtol:g})"
        parts.append(text if info.strict else f"{text} or RMSE vs fp64 within {multiplier:g}x eager's")
    return "; ".join(parts) or "compiled must run like eager"


WHAT = {"values": "wrong values", "nan_inf": "NaN/Inf where eager has numbers, or the reverse",
        "exact": "a value none of its inputs has", "signed_zero": "the wrong sign of zero",
        "layout": "other strides than eager", "meta": "another shape, dtype or device than eager",
        "bitwise": "other bits than eager", "compile_error": "an error while compiling",
        "runtime_error": "an error when the compiled code runs", "crash": "a crash", "hang": "a hang"}


def context_of(info: ReproInfo, device: str) -> dict:
    """How the graph ran: device, grad mode, and the other modes only where they were on."""
    extra = {k: v for k, v in info.context.items() if v not in (None, False) and k not in ("device", "grad_enabled")}
    return {"device": device, "grad_enabled": info.spec.grad_enabled, **extra}


def check_args(info: ReproInfo) -> dict:
    """How the tool's own oracle judges this repro (repro/runner.py)."""
    args = {"stage": info.stage, "expected": info.signature, "atol": info.atol, "rtol": info.rtol}
    if info.strict:
        args["strict"] = True
    if info.seed is not None:
        args["seed"] = info.seed
    if info.ignore:
        args["ignore"] = list(info.ignore)
    return args


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
    outputs = [value] if single else list(value)
    paths = exact_outputs(gm, outputs[0] if single else tuple(outputs))
    exact = [i for i in range(len(outputs)) if ("out" if single else f"out[{i}]") in paths]
    return Facts(outputs, single, mutated, exact, any(v is not None for v in done.aliases.values()),
                 not all(isinstance(x, torch.Tensor) for x in inputs))


def compile_call(info: ReproInfo) -> str:
    kwargs = info.spec.compile_kwargs(info.stage)
    shown = {k: v for k, v in kwargs.items() if not (k == "backend" and v == "inductor")}
    return "torch.compile(f" + "".join(f", {k}={v!r}" for k, v in shown.items()) + ")"


def modes(info: ReproInfo, device: str) -> str:
    """The `with` of the run context (empty: none)."""
    items = [] if info.spec.grad_enabled else ["torch.no_grad()"]
    if info.context.get("inference_mode"):
        items.append("torch.inference_mode()")
    autocast = info.context.get("autocast")
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
    elif rung == "nan_inf":
        out.add("bad = (a.isnan() != e.isnan()) | (a.isposinf() != e.isposinf()) | (a.isneginf() != e.isneginf())",
                "if bad.any():")
        report("NaN/Inf where eager has a number, or the reverse: " + show)
    elif rung == "values":
        floats = sorted({v.dtype for v in facts.outputs if isinstance(v, torch.Tensor) and v.is_floating_point()},
                        key=str)
        ints = any(isinstance(v, torch.Tensor) and not v.is_floating_point() for v in facts.outputs)
        if not floats:
            out.add("if not torch.equal(a, e):" if small else "bad = a != e", *([] if small else ["if bad.any():"]))
            report("differs from eager: " + show)
            return
        if len(floats) == 1 and not ints:
            atol, rtol, times = tolerance(info, floats[0])
            close = f"torch.isclose(a, e, atol={atol:g}, rtol={rtol:g}, equal_nan=True)"
        else:
            table = {str(d): tolerance(info, d) for d in floats}
            out.add(f"atol, rtol, times = {{{', '.join(f'{d}: {t!r}' for d, t in table.items())}}}"
                    f".get(e.dtype, (0, 0, 0))  # minify's tolerances by dtype")
            close = "torch.isclose(a, e, atol=atol, rtol=rtol, equal_nan=True)"
            atol, times = "atol", "times"
        out.add(f"bad = ~{close}  # minify's tolerances for {', '.join(str(d)[6:] for d in floats)}")
        if info.strict:
            out.add("if bad.any():")
            report("differs from eager beyond tolerance: " + show)
            return
        out.add("fine = e.isfinite() & a.isfinite() & r.isfinite()",
                "error = lambda x: (x.double() - r)[fine].square().mean().sqrt().item()  # RMSE against fp64",
                f"if bad.any() and (not e.is_floating_point() or error(a) > {times} * error(e) + {atol} / 10):"
                if ints else f"if bad.any() and error(a) > {times} * error(e) + {atol} / 10:")
        report("beyond tolerance, and further from fp64 than eager: " + show)
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


def accuracy_check(info: ReproInfo, facts: Facts, device: str, function: bool) -> tuple[list[str], bool]:
    """The main block (or, with `function`, the body of `def check()`) of a wrong-answer repro,
    and whether it needs the `where` helper."""
    rung = rung_of(info.signature)
    out = Lines()
    if not function:
        out.add('if __name__ == "__main__":')
        out.depth += 1
    if info.context.get("deterministic"):
        out.add("torch.use_deterministic_algorithms(True)")
    tensors = [i for i, v in enumerate(facts.outputs) if isinstance(v, torch.Tensor)]
    n_out = len(facts.outputs)
    checked = facts.exact if rung in ("exact", "signed_zero") and facts.exact else tensors
    small = all(facts.outputs[i].numel() <= SMALL for i in checked) if facts.outputs else True
    reference = rung == "values" and not info.strict and \
        any(facts.outputs[i].is_floating_point() for i in checked if isinstance(facts.outputs[i], torch.Tensor))
    keep_inputs = bool(facts.mutated) or (rung == "layout" and (facts.aliased or "view of input" in info.message))
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
            call = f"[{call}]"
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
        call = f"[{call}]" if facts.single else f"[*{call}, *fp64]" if facts.mutated else call
        out.add(*seed, f"reference = {call}  # the same graph in float64")
    if with_:
        out.depth -= 1
    pairs = [(i, f"out[{i}]") for i in checked] + [(n_out + k, f"input[{k}]") for k in facts.mutated]
    if not facts.outputs or (checked == list(range(n_out)) and not facts.mutated):
        zipped = "zip(expected, actual, reference)" if reference else "zip(expected, actual)"
        out.add(f"for i, ({'e, a, r' if reference else 'e, a'}) in enumerate({zipped}):")
        out.depth += 1
        label = "out[{i}]"
    else:
        out.add(f"for i, name in {tuple(pairs)!r}:")
        out.depth += 1
        out.add("e, a" + (", r" if reference else "") + " = expected[i], actual[i]" +
                (", reference[i]" if reference else ""))
        label = "{name}"

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


def raising_check(info: ReproInfo, device: str, function: bool) -> list[str]:
    out = Lines()
    if not function:
        out.add('if __name__ == "__main__":')
        out.depth += 1
    with_ = modes(info, device)
    out.add("try:")
    out.depth += 1
    if with_:
        out.add(f"with {with_}:", f"    {compile_call(info)}(*make_inputs())")
    else:
        out.add(f"{compile_call(info)}(*make_inputs())")
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
    out.add("try:",
            f"    child = subprocess.run([sys.executable, __file__, '--compiled-run'], capture_output=True, "
            f"timeout={CHILD_TIMEOUT})",
            "except subprocess.TimeoutExpired:")
    died = ["if child.returncode < 0 or child.returncode > 1:  # killed by a signal, or aborted",
            "    how = signal.Signals(-child.returncode).name if child.returncode < 0 else "
            "f'exit status {child.returncode}'"]
    if function:
        out.add(f"    return 'hang: the compiled run did not finish within {CHILD_TIMEOUT} s'", *died,
                "    return f'crash: the compiled run died of {how}'", "return None")
    else:
        out.add(f"    print('REPRODUCED: hang: the compiled run did not finish within {CHILD_TIMEOUT} s')",
                "    raise SystemExit(1)", *died,
                "    print(f'REPRODUCED: crash: the compiled run died of {how}')", "    raise SystemExit(1)",
                "print(f'NOT REPRODUCED: the compiled run ended with exit status {child.returncode}')")
    return out.lines


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


def header(info: ReproInfo, device: str, ops: list[str]) -> list[str]:
    def comment(text: str) -> list[str]:
        return textwrap.wrap(text, WIDTH, initial_indent="# ", subsequent_indent="# ")

    rung = rung_of(info.signature)
    what = WHAT.get(info.kind if rung == "exception" else rung, info.kind)
    where = f" in {', '.join(ops[:4])}{', ...' if len(ops) > 4 else ''}" if ops else ""
    return [*comment(f"torch.compile ({info.stage}) gives {what}{where} (minify, from {info.source})."),
            *comment(f"torch {torch.__version__}, Python {platform.python_version()}, {platform.system()} "
                     f"{platform.machine()} ({device}). Exit 1 while the bug is there, 0 once it is fixed.")]


def _ops(gm: fx.GraphModule) -> list[str]:
    from compiler.oracle import op_name

    return [op_name(n) for n in gm.graph.nodes if n.op in ("call_function", "call_method")
            and getattr(n.target, "__name__", "") != "getitem"]


def build(gm: fx.GraphModule, inputs: list, info: ReproInfo) -> ReproParts:
    device = input_device(inputs)
    descriptions, dtypes = describe_run(gm, inputs)
    imports, forward = forward_source(gm)
    imports_used = used_imports(imports, forward)
    annotated = annotate_forward(forward, descriptions)
    function = annotated.replace("def forward(self, ", "def f(", 1).replace("def forward(self)", "def f()", 1)
    facts = eager_facts(gm, inputs, info.context)
    plan = plan_inputs(inputs, [p.name for p in placeholders(gm)], INPUTS_FILE, device)
    inject = injection_source(info.injections).rstrip()
    config = config_lines(info.spec.config)
    main, needs_where = check_lines(info, facts, device, function=False)
    as_function, _ = check_lines(info, facts, device, function=True)
    stdlib = ["import signal", "import subprocess", "import sys"] if info.kind in CRASHING else []
    if plan.saved:
        stdlib.append("from pathlib import Path")
    lines = [*header(info, device, _ops(gm)), *stdlib, *([""] if stdlib else []), *imports_used]
    if inject:
        lines.append("import torch._functorch.config")
    if config or inject:
        lines.append("import torch._inductor.config")
    if plan.saved:
        lines.append(f"INPUTS = Path(__file__).resolve().with_name({INPUTS_FILE!r})")
    if config:
        lines += ["", *config]
    if inject:
        lines += ["", inject]
    lines += ["", "", function.rstrip(), "", "", plan.source.rstrip()]
    if needs_where:
        lines += ["", "", WHERE_HELPER]
    lines += ["", "", *main]
    text = "\n".join(lines) + "\n"
    compile_kwargs = info.spec.compile_kwargs(info.stage)
    module_source = "class Repro(torch.nn.Module):\n" + "\n".join(
        "    " + line for line in annotated.splitlines()) + "\n"
    test_check = ["def check():", '    """What differs between compiled and eager, as repro.py checks it; None: '
                  'nothing."""', *["    " + line if line else "" for line in as_function]]
    manifest = {
        "kind": info.kind, "stage": info.stage, "signature": info.signature, "rung": rung_of(info.signature),
        "message": info.message, "source": info.source, "script": info.script, "graph": info.graph,
        "device": device, "torch": torch.__version__, "python": platform.python_version(),
        "platform": platform.platform(), "spec": info.spec.to_dict(), "compile": compile_kwargs,
        "config": dict(info.spec.config), "config_source": config, "context": context_of(info, device),
        "check": check_args(info), "injections": [i.to_dict() for i in info.injections],
        "injection_source": inject, "inputs_file": INPUTS_FILE if plan.saved else None,
        "inputs": [describe(v) for v in inputs], "output_dtypes": [str(d) for d in dtypes],
        "oracle_summary": oracle_summary(info, dtypes), "imports": imports_used,
        "function_source": function.rstrip() + "\n", "module_source": module_source,
        "make_inputs_source": plan.source,
        "check_source": "\n".join(test_check + ([""] + WHERE_HELPER.splitlines() if needs_where else [])) + "\n",
        "child_source": "\n".join(child_block(info, device)) + "\n" if info.kind in CRASHING else "",
        "stdlib_imports": stdlib,
    }
    return ReproParts(text, plan.saved, manifest)
