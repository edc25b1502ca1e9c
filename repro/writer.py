"""Write repro.py: the minimized graph, its real inputs, the compile call, and how it is judged.

The script needs only torch and runs from any directory. It shows the graph as plain torch
code (shapes and dtypes in comments), the inputs (inline literals, or a file beside it loaded
with `weights_only=True`), the user's compile settings, the Inductor config values the script
changed, any planted codegen bug, and the oracle's tolerances. The oracle itself lives in a
sidecar file beside it (repro/embed.py) so repro.py fits on a screen. `python repro.py` exits
1 with one line when the failure reproduces, 0 when it does not, 2 when it cannot run.
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
from compiler.stages import CompileSpec
from compiler.oracle import TOLERANCES
from repro.annotate import annotate_forward, describe_run
from repro.embed import SIDECAR_PREFIX, sidecar_name, sidecar_source, write_sidecar
from repro.inputs import describe, plan_inputs, save_inputs
from repro.manifest import REPRO, write_manifest

INPUTS_FILE = "inputs.pt"
WIDTH = 110  # header comment lines


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
    strict: bool = False  # the oracle judged floats by the tolerances alone
    seed: int | None = None  # the oracle re-seeded every run from this (graphs that draw random numbers)
    context: dict = field(default_factory=dict)  # inference_mode, autocast {"dtype": ...}, deterministic
    script: str = ""  # the user's script, for names of generated tests and the issue text
    graph: int | None = None  # index of the failing graph in the script


@dataclass
class ReproParts:
    text: str
    saved: list  # inputs that go to INPUTS_FILE (empty: all inline)
    oracle_file: str
    manifest: dict


def write_repro(folder: Path, gm: fx.GraphModule, inputs: list, info: ReproInfo) -> Path:
    """repro.py, the oracle sidecar, the inputs file when needed, and repro.json, in `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    parts = build(gm, inputs, info)
    write_sidecar(folder)
    for stale in folder.glob(f"{SIDECAR_PREFIX}*.py"):
        if stale.name != parts.oracle_file:
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
        atol, rtol, multiplier = TOLERANCES.get(d, (1e-4, 1e-4, 2.0))
        atol, rtol = (atol if info.atol is None else info.atol), (rtol if info.rtol is None else info.rtol)
        text = f"{str(d).replace('torch.', '')} allclose(atol={atol:g}, rtol={rtol:g})"
        parts.append(text if info.strict else f"{text} or RMSE vs fp64 within {multiplier:g}x eager's")
    return "; ".join(parts) or "compiled must run like eager"


def header(info: ReproInfo, device: str, oracle_file: str, dtypes: list) -> list[str]:
    def comment(text: str, first: str = "# ") -> list[str]:
        return textwrap.wrap(text, WIDTH, initial_indent=first, subsequent_indent="#   ")

    message = info.message.strip().splitlines()[0][:300] if info.message.strip() else ""
    return [
        *comment(f"minify repro: {info.kind} at stage {info.stage} (the first that fails), from {info.source}."),
        *comment(message, "#   "),
        f"# torch {torch.__version__}, Python {platform.python_version()}, {platform.system()} {platform.machine()}, "
        f"device {device}",
        *comment(f"Oracle: check() in {oracle_file}, kept beside this file; {oracle_summary(info, dtypes)}."),
        "# Run: python repro.py [--device cuda] [--verbose]: exit 1 and one line if the bug reproduces, else 0.",
    ]


def context_of(info: ReproInfo, device: str) -> dict:
    """How the graph ran: device, grad mode, and the other modes only where they were on."""
    extra = {k: v for k, v in info.context.items() if v not in (None, False) and k not in ("device", "grad_enabled")}
    return {"device": device, "grad_enabled": info.spec.grad_enabled, **extra}


def check_args(info: ReproInfo) -> dict:
    args = {"stage": info.stage, "expected": info.signature, "atol": info.atol, "rtol": info.rtol}
    if info.strict:
        args["strict"] = True
    if info.seed is not None:
        args["seed"] = info.seed
    return args


# Loads the oracle sidecar by absolute path (a user's module of the same name cannot shadow it).
MAIN_BLOCK = textwrap.dedent("""\
    if __name__ == "__main__":
        if not ORACLE.is_file():
            print(f"CANNOT RUN: {ORACLE} (minify's oracle) is missing; keep it beside repro.py")
            sys.exit(2)
        spec = importlib.util.spec_from_file_location(ORACLE.stem, ORACLE)
        oracle = sys.modules[spec.name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(oracle)
        sys.exit(oracle.main(Repro, make_inputs, COMPILE, CONTEXT, CHECK, __file__))""")


def setup_lines(imports: list[str], config: list[str], inject: str) -> list[str]:
    """Imports, the Inductor config the script changed, and the planted bug, in that order."""
    lines = ["import importlib.util", "import sys", "from pathlib import Path", "", *imports]
    if config or inject:
        lines += ["import torch._functorch.config", "import torch._inductor.config"]
    if config:
        lines += ["", "# Inductor config the script changed (only values that differ from the defaults):", *config]
    if inject:
        lines += ["", inject]
    return lines


def build(gm: fx.GraphModule, inputs: list, info: ReproInfo) -> ReproParts:
    device = input_device(inputs)
    descriptions, dtypes = describe_run(gm, inputs)
    imports, forward = forward_source(gm)
    imports_used = used_imports(imports, forward)
    body = "\n".join("    " + line for line in annotate_forward(forward, descriptions).splitlines())
    oracle_file = sidecar_name(sidecar_source())
    plan = plan_inputs(inputs, [p.name for p in placeholders(gm)], INPUTS_FILE, device)
    inject = injection_source(info.injections).rstrip()
    compile_kwargs = info.spec.compile_kwargs(info.stage)
    context, check = context_of(info, device), check_args(info)
    setup = setup_lines(imports_used, config_lines(info.spec.config), inject)
    lines = [*header(info, device, oracle_file, dtypes), *setup, "", "", "class Repro(torch.nn.Module):", body,
             "", "", plan.source.rstrip(), "", "",
             f"COMPILE = {compile_kwargs!r}  # torch.compile(Repro(), **COMPILE)",
             f"CONTEXT = {context!r}  # how the graph ran",
             f"CHECK = {check!r}  # atol/rtol None: by dtype",
             f"ORACLE = Path(__file__).resolve().with_name({oracle_file!r})"]
    if plan.saved:
        lines.append(f"INPUTS = Path(__file__).resolve().with_name({INPUTS_FILE!r})")
    text = "\n".join([*lines, "", MAIN_BLOCK]) + "\n"
    manifest = {
        "kind": info.kind, "stage": info.stage, "signature": info.signature, "message": info.message,
        "source": info.source, "script": info.script, "graph": info.graph, "device": device,
        "torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform(),
        "spec": info.spec.to_dict(), "compile": compile_kwargs, "config": dict(info.spec.config),
        "context": context, "check": check, "injections": [i.to_dict() for i in info.injections],
        "injection_source": inject, "oracle_file": oracle_file, "inputs_file": INPUTS_FILE if plan.saved else None,
        "inputs": [describe(v) for v in inputs], "output_dtypes": [str(d) for d in dtypes],
        "oracle_summary": oracle_summary(info, dtypes), "imports": imports_used,
        "module_source": "class Repro(torch.nn.Module):\n" + body + "\n", "make_inputs_source": plan.source,
    }
    return ReproParts(text, plan.saved, oracle_file, manifest)
