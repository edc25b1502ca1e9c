"""A repro folder judged by minify's own oracle, in this process: the tool's side of a repro.

repro.py makes its rung's check in plain torch, for people. The tool needs more: the metrics
of every output (`minify replay`), and experiments under other settings (`minify bisect`).
Both rebuild the graph, its inputs, the script's Inductor config and any planted bug from
repro.json (written with repro.py by repro/writer.py) and judge runs with compiler.oracle.judged_check,
in the context the graph ran in (grad mode, inference mode, autocast, deterministic
algorithms, RNG seed).

`python -m repro.runner REPRO_DIR [--device D]` prints the reference, one metric line per
output and a verdict line (`REPRODUCED: ...`: exit 1, `NOT REPRODUCED: ...`: exit 0, `CANNOT
RUN: ...`: exit 2).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import SimpleNamespace

import torch
import torch._dynamo
import torch._functorch.config
import torch._inductor.config

from compiler import aoti_compile, cudagraphs
from compiler.context import run_context
from compiler.judging import Judging
from compiler.oracle import judged_check
from compiler.program_files import load_program
from repro.manifest import ReproFolderError, read_manifest

REPRODUCED, NOT_REPRODUCED, CANNOT_RUN = 1, 0, 2


class CannotRun(Exception):
    """The repro could not even be set up (missing file, bad device): not a verdict on the bug."""


def load(folder: Path, plant: bool = True) -> SimpleNamespace:
    """Repro (the graph as a module), make_inputs, the manifest, and (`plant`) the script's config
    set and the planted bug applied, as `python repro.py` would have them: program_source run as
    a file of the run's programs folder (compiler.program_files; never the repro folder)."""
    manifest = read_manifest(folder)
    module = load_program(program_source(folder, manifest, plant), "replay")
    return SimpleNamespace(Repro=module.Repro, make_inputs=module.make_inputs, manifest=manifest,
                           COMPILE=manifest["compile"], CONTEXT=manifest["context"], CHECK=manifest["check"])


def program_source(folder: Path, manifest: dict, plant: bool = True) -> str:
    """One program of the sources the manifest carries, in repro.py's order: its imports, the
    inputs file's path, (`plant`) the script's config and the planted bug, the graph's module
    and make_inputs."""
    setup = list(manifest.get("imports") or ["import torch"]) + ["import torch._functorch.config",
                                                                  "import torch._inductor.config"]
    if manifest.get("inputs_file"):
        setup += ["from pathlib import Path",
                  f"INPUTS = Path({str((folder / manifest['inputs_file']).resolve())!r})"]
    parts = [f"# The repro in {str(folder.resolve())!r}, built from its repro.json by repro/runner.py",
             "\n".join(setup)]
    if plant:
        parts.append("\n".join(manifest.get("config_source") or []))
        parts.append(manifest.get("injection_source") or "")
    parts += [manifest["module_source"], manifest["make_inputs_source"]]
    return "\n\n".join(part.rstrip("\n") for part in parts if part.strip()) + "\n"


def run_check(model_cls, make_inputs, compile_kwargs, context, check_args, device=None, config=None):
    """One run judged by the oracle: the compiled model against eager on the saved inputs."""
    device = device or context.get("device", "cpu")
    torch._dynamo.reset()
    torch.manual_seed(context.get("seed", 0))
    try:
        inputs = make_inputs(device)
    except Exception as exc:
        raise CannotRun(f"cannot build the inputs on {device}: {type(exc).__name__}: {exc}") from None
    model = model_cls().to(device)
    judging = Judging.from_dict(check_args)  # atol, rtol, strict, ignore, as the run judged
    # As in every minify process, whole-graph caches off: a warm cache changes the error a
    # failing compile raises (torch 2.13), and would hide a planted codegen bug.
    # Kernels compile in-process: a failed compile can break Inductor's compile pool.
    no_caches = {"fx_graph_cache": False, "fx_graph_remote_cache": False, "compile_threads": 1}
    with torch._inductor.config.patch({**no_caches, **(config or {})}), \
            torch._functorch.config.patch(enable_autograd_cache=False), run_context(context, device):
        run = compiled(model, cudagraphs.obeying(compile_kwargs, config))
        cudagraphs.prime(run, inputs, check_args.get("calls_before", 0))  # CUDA graphs: as late as in the script
        return judged_check(model, inputs, run, check_args.get("stage", "inductor"), judging, check_args.get("seed"))


def compiled(model, compile_kwargs: dict):
    """The model compiled as repro.py compiles it: an AOTInductor repro (backend `aoti`) exported
    and compiled with aoti_compile_and_package, any other with torch.compile."""
    if compile_kwargs.get("backend") == aoti_compile.BACKEND:
        return aoti_compile.compiled(model)
    return torch.compile(model, **compile_kwargs)


def verdict(outcome, expected):
    """(exit code, the one line): REPRODUCED only for a failure with the expected signature."""
    if outcome.status == "fail" and outcome.signature == expected:
        return REPRODUCED, f"REPRODUCED: {outcome.kind}: {outcome.message}"
    line = "NOT REPRODUCED: " + " ".join(filter(None, [outcome.status, outcome.kind]))
    if outcome.message:
        line += f": {outcome.message}"
    if outcome.status == "fail":
        line += f" (expected {expected})"
    return NOT_REPRODUCED, line


def metric_lines(outcome):
    """One line per compared output: its error metrics, and what it was judged against."""
    lines = [f"  reference: {outcome.reference or 'none'}"]
    for m in outcome.metrics:
        shown = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                          for k, v in m.items() if k not in ("output", "dtype", "shape"))
        lines.append(f"  {m.get('output')} {m.get('dtype', '')}{m.get('shape', '')}: {shown}")
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m repro.runner",
                                description="Judge a repro folder with minify's oracle: metrics and a verdict.")
    p.add_argument("folder", type=Path)
    p.add_argument("--device", help="run on this device instead of the recorded one (e.g. cuda)")
    ns = p.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        repro = load(ns.folder)
        device = ns.device or repro.CONTEXT.get("device", "cpu")
        if torch.device(device).type == "cuda" and not torch.cuda.is_available():
            raise CannotRun(f"this repro runs on {device} and no CUDA GPU is present; try --device cpu")
        if repro.manifest["kind"] in ("crash", "hang"):
            raise CannotRun(f"a {repro.manifest['kind']} is judged by repro.py itself (its compiled run goes "
                            f"to a child process)")
        outcome = run_check(repro.Repro, repro.make_inputs, repro.COMPILE, repro.CONTEXT, repro.CHECK, device)
    except (CannotRun, ReproFolderError) as exc:
        print(f"CANNOT RUN: {exc}")
        return CANNOT_RUN
    print("\n".join(metric_lines(outcome)))
    code, line = verdict(outcome, repro.CHECK["expected"])
    print(line)
    return code


if __name__ == "__main__":
    from compiler.quick_exit import quick_exit

    quick_exit(main())
