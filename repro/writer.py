"""Write repro.py: the minimized graph, its real inputs, the compile call, and the oracle.

The script needs only torch, runs from any directory, loads its inputs from the file beside
it with `weights_only=True`, replays the user's non-default Inductor config and any planted
codegen bug, and exits 1 with one line when the failure reproduces (0 when it does not).
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.fx as fx

from compiler.config_snapshot import config_lines
from compiler.graph_code import forward_source
from compiler.inject import Injection, injection_source
from compiler.stages import CompileSpec
from minifier.graph_edit import placeholders
from repro.embed import oracle_source
from repro.inputs import save_inputs

INPUTS_FILE = "inputs.pt"


@dataclass
class ReproInfo:
    signature: str
    kind: str
    stage: str
    message: str
    spec: CompileSpec
    injections: list[Injection]
    source: str  # where the graph came from, for the header
    atol: float | None = None
    rtol: float | None = None


def describe(value) -> str:
    if isinstance(value, torch.Tensor):
        stride = "" if value.is_contiguous() else f", stride={tuple(value.stride())}"
        return f"{str(value.dtype).replace('torch.', '')}{list(value.shape)}{stride}"
    return f"{type(value).__name__} = {value!r}"


def write_repro(folder: Path, gm: fx.GraphModule, inputs: list, info: ReproInfo) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    save_inputs(inputs, folder / INPUTS_FILE)
    path = folder / "repro.py"
    path.write_text(render(gm, inputs, info))
    return path


def render(gm: fx.GraphModule, inputs: list, info: ReproInfo) -> str:
    imports, forward = forward_source(gm)
    args = ", ".join(f"{p.name}: {describe(v)}" for p, v in zip(placeholders(gm), inputs))
    header = textwrap.dedent(f'''\
        # Repro written by minify: {info.kind} at stage {info.stage}.
        #   {info.message}
        #   from {info.source}; torch {torch.__version__}, device cpu
        #   inputs: {args}
        # Run: python repro.py   (exit 1 with one line when the bug reproduces, 0 when it does not)
        ''')
    setup = "\n".join(config_lines(info.spec.config))
    inject = injection_source(info.injections)
    compile_kwargs = info.spec.compile_kwargs(info.stage)
    body = "\n".join("    " + line for line in forward.splitlines())
    return f'''{header}import argparse
import subprocess
import sys
from pathlib import Path

{imports}
import torch._functorch.config
import torch._inductor.config
{setup}
{inject}

class Repro(torch.nn.Module):
{body}


COMPILE = {compile_kwargs!r}
STAGE = {info.stage!r}
GRAD_ENABLED = {info.spec.grad_enabled!r}
EXPECTED = {info.signature!r}  # the failure signature this repro must show
TOLERANCE = dict(atol={info.atol!r}, rtol={info.rtol!r})


def load_inputs():
    return torch.load(Path(__file__).with_name({INPUTS_FILE!r}), weights_only=True)


def run_check():
    model = Repro()
    with torch.set_grad_enabled(GRAD_ENABLED):
        return check(model, load_inputs(), torch.compile(model, **COMPILE), stage=STAGE, **TOLERANCE)


def main():
    parser = argparse.ArgumentParser(description="Check whether the minimized torch.compile bug reproduces.")
    parser.add_argument("--verbose", action="store_true", help="print the error metrics of every output")
    parser.add_argument("--in-process", action="store_true", help="do not isolate a crashing compiled run")
    args = parser.parse_args()
    if EXPECTED.startswith(("crash@", "hang@")) and not args.in_process:
        try:
            child = subprocess.run([sys.executable, __file__, "--in-process"], timeout=600)
            code = child.returncode
        except subprocess.TimeoutExpired:
            code = None
        if code is not None and code >= 0:
            sys.exit(code)
        kind, signature, message = crash_signature(code, STAGE) if code is not None else hang_signature(600, STAGE)
        outcome = Outcome("fail", kind, signature, message)
    else:
        outcome = run_check()
    if args.verbose:
        for m in outcome.metrics:
            print(m)
    if outcome.status == "fail" and outcome.signature == EXPECTED:
        print(f"REPRODUCED: {{outcome.kind}} at {{STAGE}}: {{outcome.message}}")
        sys.exit(1)
    print(f"NOT REPRODUCED: {{outcome.status}} {{outcome.kind}} {{outcome.message}}".rstrip())
    sys.exit(0)


# ---- The oracle minify used to judge every candidate, embedded verbatim. ----
{oracle_source()}

if __name__ == "__main__":
    main()
'''
