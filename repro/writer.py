"""Write repro.py: one file that shows the bug and checks it in plain torch.

What it holds, in order: a two- or three-line header (what fails, where it came from, the
versions), the imports, the Inductor config the script changed and any planted bug (inline),
the minimized graph as a function `f` (shapes and dtypes in comments), `make_inputs` (inline
literals, or one tensor file beside it loaded with `weights_only=True`), and a main block that
runs eager and compiled and makes the check of the oracle's rung that fired (repro/checks.py
writes it). `python repro.py` prints one line, `REPRODUCED: ...` (exit 1) or
`NOT REPRODUCED: ...` (exit 0). The same check, as a function, goes into repro.json for
`minify test-from` (repro/testgen.py); the tool itself judges a folder with its own oracle
from repro.json (repro/runner.py).
"""
from __future__ import annotations

import copy
import operator
import platform
import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.fx as fx

from compiler.config_snapshot import config_lines
from compiler.cudagraphs import PRIMED_HELPER
from compiler.graph_code import carried_definitions, forward_source, placeholders
from compiler.inject import Injection, injection_source
from compiler.ladder import tolerances
from compiler.oracle import clone_inputs
from compiler.signature import rung_of
from repro.annotate import annotate_forward, describe_run
from repro.checks import AOTI, AOTI_HELPER, CRASHING, WHERE_HELPER, check_lines, child_block, eager_facts
from repro.info import ReproInfo
from repro.inputs import describe, plan_inputs, save_inputs
from repro.manifest import REPRO, write_manifest

INPUTS_FILE = "inputs.pt"
WIDTH = 110  # header comment lines


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


def oracle_summary(info: ReproInfo, dtypes: list) -> str:
    """How the oracle judges these outputs, in words."""
    parts = []
    if any(not (d.is_floating_point or d.is_complex) for d in dtypes):
        parts.append("integer/bool outputs exact")
    for d in sorted({d for d in dtypes if d.is_floating_point}, key=str):
        atol, rtol, multiplier = tolerances(d, info.judging)
        text = f"{str(d).replace('torch.', '')} allclose(atol={atol:g}, rtol={rtol:g})"
        parts.append(text if info.judging.strict else f"{text} or RMSE vs fp64 within {multiplier:g}x eager's")
    return "; ".join(parts) or "compiled must run like eager"


WHAT = {"values": "wrong values", "nan_inf": "NaN/Inf where eager has numbers, or the reverse",
        "exact": "a value none of its inputs has", "signed_zero": "the wrong sign of zero",
        "layout": "other strides than eager", "meta": "another shape, dtype or device than eager",
        "bitwise": "other bits than eager", "compile_error": "an error while compiling",
        "runtime_error": "an error when the compiled code runs", "crash": "a crash", "hang": "a hang"}


def context_of(info: ReproInfo, device: str) -> dict:
    """How the graph ran: device, grad mode, and the other modes only where they were on."""
    extra = {k: v for k, v in info.setup.context.items() if v not in (None, False) and k not in ("device", "grad_enabled")}
    return {"device": device, "grad_enabled": info.setup.spec.grad_enabled, **extra}


def check_args(info: ReproInfo) -> dict:
    """How the tool's own oracle judges this repro (repro/runner.py)."""
    judging = info.judging.to_dict()  # atol, rtol always; strict and ignore where set
    args = {"stage": info.stage, "expected": info.signature, "atol": judging["atol"], "rtol": judging["rtol"]}
    args.update({k: judging[k] for k in ("strict", "ignore") if judging[k]})
    if info.seed is not None:
        args["seed"] = info.seed
    if info.setup.calls_before:
        args["calls_before"] = info.setup.calls_before
    return args


def header(info: ReproInfo, device: str, ops: list[str]) -> list[str]:
    def comment(text: str) -> list[str]:
        return textwrap.wrap(text, WIDTH, initial_indent="# ", subsequent_indent="# ")

    rung = rung_of(info.signature)
    what = WHAT.get(info.kind if rung == "exception" else rung, info.kind)
    where = f" in {', '.join(ops[:4])}{', ...' if len(ops) > 4 else ''}" if ops else ""
    who = "AOTInductor (aoti_compile_and_package)" if info.setup.spec.backend == AOTI else f"torch.compile ({info.stage})"
    return [*comment(f"{who} gives {what}{where} (minify, from {info.source})."),
            *comment(f"torch {torch.__version__}, Python {platform.python_version()}, {platform.system()} "
                     f"{platform.machine()} ({device}). Exit 1 while the bug is there, 0 once it is fixed.")]


def _ops(gm: fx.GraphModule) -> list[str]:
    from compiler.oracle import op_name

    return [op_name(n) for n in gm.graph.nodes if n.op in ("call_function", "call_method")
            and getattr(n.target, "__name__", "") != "getitem"]


def split_tuple_outputs(gm: fx.GraphModule, inputs: list) -> fx.GraphModule:
    """`gm` with each output that is a tuple of tensors (what a multi-output op such as
    `x.min(dim=0)` returns, when a reduction cut the graph right after it) replaced by its
    elements: repro.py compares tensors, and would otherwise check nothing."""
    output = next(iter(gm.graph.find_nodes(op="output")))
    returned = output.args[0]
    if not isinstance(returned, (tuple, list)):
        return gm
    try:
        with torch.no_grad():
            values = gm(*clone_inputs(inputs))  # copies: a graph that writes into its inputs changes them
    except Exception:  # eager fails on these inputs: the repro's check says so
        return gm
    if not any(isinstance(v, (tuple, list)) and all(isinstance(x, torch.Tensor) for x in v) for v in values):
        return gm
    gm = fx.GraphModule(gm, copy.deepcopy(gm.graph))
    output = next(iter(gm.graph.find_nodes(op="output")))
    flat = []
    with gm.graph.inserting_before(output):
        for node, value in zip(output.args[0], values):
            if isinstance(node, fx.Node) and isinstance(value, (tuple, list)) and value and \
                    all(isinstance(x, torch.Tensor) for x in value):
                flat += [gm.graph.call_function(operator.getitem, (node, k)) for k in range(len(value))]
            else:
                flat.append(node)
    output.args = (tuple(flat),)
    gm.recompile()
    return gm


# As minify's own processes compile (compiler.settings): kernels built in this process. A
# compile pool would cost more than the graph: starting its processes takes seconds, longer than
# building a small repro's few kernels in this one.
IN_PROCESS = ["torch._inductor.config.compile_threads = 1"]


def planted(info: ReproInfo) -> list:
    """The bugs planted in the graph's compile: the setup's dicts read back, or injections given
    whole (a spec no dict names, such as a test's own post-grad pass)."""
    return [Injection.from_dict(i) if isinstance(i, dict) else i for i in info.setup.injections]


def build(gm: fx.GraphModule, inputs: list, info: ReproInfo) -> ReproParts:
    gm = split_tuple_outputs(gm, inputs)
    device = input_device(inputs)
    descriptions, dtypes = describe_run(gm, inputs)
    imports, forward = forward_source(gm)
    imports_used = used_imports(imports, forward) + [d for d in [carried_definitions(gm)] if d]  # ops', kernels' definitions
    annotated = annotate_forward(forward, descriptions)
    function = annotated.replace("def forward(self, ", "def f(", 1).replace("def forward(self)", "def f()", 1)
    facts = eager_facts(gm, inputs, info.setup.context)
    plan = plan_inputs(inputs, [p.name for p in placeholders(gm)], INPUTS_FILE, device)
    inject = injection_source(planted(info)).rstrip()
    config = config_lines(info.setup.spec.config)
    main, needs_where = check_lines(info, facts, device, function=False)
    as_function, _ = check_lines(info, facts, device, function=True)
    stdlib = ["import signal", "import subprocess", "import sys"] if info.kind in CRASHING else []
    aoti = info.setup.spec.backend == AOTI
    if aoti:
        stdlib = sorted(stdlib + ["import os", "import tempfile"])
    if plan.saved:
        stdlib.append("from pathlib import Path")
    lines = [*header(info, device, _ops(gm)), *stdlib, *([""] if stdlib else []), *imports_used]
    if inject:
        lines.append("import torch._functorch.config")
    lines.append("import torch._inductor.config")
    if "torch.ops.prims." in function:  # Inductor's own prims (fma, ...) exist once this is imported
        lines.append("import torch._inductor.inductor_prims  # noqa: F401")
    if plan.saved:
        lines.append(f"INPUTS = Path(__file__).resolve().with_name({INPUTS_FILE!r})")
    lines += ["", *IN_PROCESS, *config]
    if inject:
        lines += ["", inject]
    lines += ["", "", function.rstrip(), "", "", plan.source.rstrip()]
    for helper, needed in ((AOTI_HELPER, aoti), (PRIMED_HELPER, info.setup.calls_before), (WHERE_HELPER, needs_where)):
        lines += ["", "", helper] if needed else []
    lines += ["", "", *main]
    text = "\n".join(lines) + "\n"
    compile_kwargs = info.setup.spec.compile_kwargs(info.stage)
    module_source = "class Repro(torch.nn.Module):\n" + "\n".join(
        "    " + line for line in annotated.splitlines()) + "\n"
    test_check = ["def check():", '    """What differs between compiled and eager, as repro.py checks it; None: '
                  'nothing."""', *["    " + line if line else "" for line in as_function]]
    manifest = {
        "kind": info.kind, "stage": info.stage, "signature": info.signature, "rung": rung_of(info.signature),
        "message": info.message, "source": info.source, "script": info.script, "graph": info.graph,
        "device": device, "torch": torch.__version__, "python": platform.python_version(),
        "platform": platform.platform(), "spec": info.setup.spec.to_dict(), "compile": compile_kwargs,
        "config": dict(info.setup.spec.config), "config_source": config, "context": context_of(info, device),
        "check": check_args(info), "injections": [i.to_dict() for i in planted(info)],
        "injection_source": inject, "inputs_file": INPUTS_FILE if plan.saved else None,
        "inputs": [describe(v) for v in inputs], "output_dtypes": [str(d) for d in dtypes],
        "oracle_summary": oracle_summary(info, dtypes), "imports": imports_used,
        "function_source": function.rstrip() + "\n", "module_source": module_source,
        "make_inputs_source": plan.source,
        "check_source": "\n".join(test_check + ([""] + WHERE_HELPER.splitlines() if needs_where else [])
                                  + ([""] + PRIMED_HELPER.splitlines() if info.setup.calls_before else [])
                                  + ([""] + AOTI_HELPER.splitlines() if aoti else [])) + "\n",
        "child_source": "\n".join(child_block(info, device)) + "\n" if info.kind in CRASHING else "",
        "stdlib_imports": stdlib,
    }
    return ReproParts(text, plan.saved, manifest)
