"""Run a repro and say in one line whether its bug reproduces.

Builds the model and inputs on the chosen device, compiles them with the user's settings in
the context the graph ran in (grad mode, inference mode, autocast, deterministic algorithms,
RNG seed), judges the run with the oracle's `check`, and prints one verdict line. A repro of
a crash or hang runs the check in a child process so the verdict can still be printed.

Standalone on purpose (stdlib + torch only): repro/embed.py writes it verbatim, after the
oracle, into the sidecar file that repro.py and generated tests load; repro.py stays short.
"""
import argparse
import contextlib
import json
import subprocess
import sys

import torch
import torch._dynamo
import torch._functorch.config
import torch._inductor.config

from compiler.oracle import Outcome, check  # minify: embed-skip
from compiler.signature import crash_signature, hang_signature  # minify: embed-skip
from compiler.context import run_context  # minify: embed-skip

REPRODUCED, NOT_REPRODUCED, CANNOT_RUN = 1, 0, 2
CHILD_TIMEOUT = 600.0
OUTCOME_MARK = "MINIFY-OUTCOME "


class CannotRun(Exception):
    """The repro could not even be set up (missing file, bad device): not a verdict on the bug."""


def run_check(model_cls, make_inputs, compile_kwargs, context, check_args, device=None, config=None):
    """One run judged by the oracle: the compiled model against eager on the saved inputs."""
    device = device or context.get("device", "cpu")
    torch._dynamo.reset()
    torch.manual_seed(context.get("seed", 0))
    inputs = make_inputs(device)
    model = model_cls().to(device)
    args = {k: v for k, v in check_args.items() if k != "expected"}
    # As in every minify process, whole-graph caches off: a warm cache changes the error a
    # failing compile raises (torch 2.13), and would hide a planted codegen bug.
    # Kernels compile in-process: a failed compile can break Inductor's compile pool.
    no_caches = {"fx_graph_cache": False, "fx_graph_remote_cache": False, "compile_threads": 1}
    with torch._inductor.config.patch({**no_caches, **(config or {})}), \
            torch._functorch.config.patch(enable_autograd_cache=False), run_context(context, device):
        return check(model, inputs, torch.compile(model, **compile_kwargs), **args)


def run_isolated(file, argv, stage, timeout=CHILD_TIMEOUT):
    """Run `python file --in-process --outcome-json ARGV` and rebuild its Outcome: a child
    killed by a signal, or silent, is a crash; one that runs out of time is a hang; one that
    could not run raises CannotRun with its reason."""
    command = [sys.executable, str(file), "--in-process", "--outcome-json", *argv]
    try:
        child = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        kind, signature, message = hang_signature(timeout, stage)
        return Outcome("fail", kind, signature, message)
    for line in reversed(child.stdout.splitlines()):
        if line.startswith(OUTCOME_MARK):
            return Outcome(**json.loads(line[len(OUTCOME_MARK):]))
        if line.startswith("CANNOT RUN") and child.returncode == CANNOT_RUN:
            raise CannotRun(line[len("CANNOT RUN: "):])
    kind, signature, message = crash_signature(child.returncode, stage)
    return Outcome("fail", kind, signature, message)


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


def main(model_cls, make_inputs, compile_kwargs, context, check_args, file, argv=None, config=None):
    """repro.py's command line: exit 1 when the bug reproduces, 0 when not, 2 when it cannot run."""
    parser = argparse.ArgumentParser(description="Check whether the minimized torch.compile bug reproduces.")
    parser.add_argument("--device", help=f"run on this device instead of {context.get('device', 'cpu')} (e.g. cuda)")
    parser.add_argument("--verbose", action="store_true", help="print the error metrics of every output")
    parser.add_argument("--in-process", action="store_true", help="do not isolate a crashing compiled run")
    parser.add_argument("--outcome-json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    expected, stage = check_args["expected"], check_args.get("stage", "inductor")
    device = args.device or context.get("device", "cpu")
    if torch.device(device).type == "cuda" and not torch.cuda.is_available():
        print(f"CANNOT RUN: this repro runs on {device} (where the bug was found) and no CUDA GPU is present; "
              f"try --device cpu")
        return CANNOT_RUN
    try:
        if expected.startswith(("crash@", "hang@")) and not args.in_process:
            outcome = run_isolated(file, ["--device", args.device] if args.device else [], stage)
        else:
            outcome = run_check(model_cls, make_inputs, compile_kwargs, context, check_args, args.device, config)
    except Exception as exc:  # the check itself catches compiler failures: this is the setup failing
        print(f"CANNOT RUN: {_one_line(exc)}")
        return CANNOT_RUN
    if args.outcome_json:
        print(OUTCOME_MARK + json.dumps(outcome.__dict__, default=str))
    if args.verbose:
        print("\n".join(metric_lines(outcome)))
    code, line = verdict(outcome, expected)
    print(line)
    return code


def _one_line(exc):
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return first if isinstance(exc, CannotRun) else f"{type(exc).__name__}: {first}"
