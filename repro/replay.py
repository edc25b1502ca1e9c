"""`minify replay DIR`: rerun a repro folder in fresh processes; print the metrics and the verdict.

repro.py runs first, from another directory, as a maintainer would run it: its one line is the
verdict and its exit code the command's (1 when the bug reproduces, 0 when it does not, 2 when
it cannot run, its inputs cannot be loaded, or DIR is not a repro folder: a traceback is never
taken for "reproduces"). Then minify's own oracle judges the same graph on
the same inputs in a second fresh process (repro/runner.py) for the error metrics of every
output. With `--device`, only that second judgment runs, on the device asked for.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

from repro.manifest import REPRO, ReproFolderError, read_manifest
from repro.verify import run_repro
from repro.one_line_parser import OneLineParser

CANNOT_RUN = 2
ROOT = Path(__file__).resolve().parents[1]


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="minify replay", description="Rerun a repro folder written by minify "
                                "in a fresh process, from another directory; print the verdict and metrics.")
    p.add_argument("folder", type=Path, help="the folder that holds repro.py")
    p.add_argument("--device", help="judge on this device instead of the recorded one (e.g. cuda), with minify's "
                                    "oracle only")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds before giving up (default 1800)")
    return p


def oracle_metrics(folder: Path, device: str | None, timeout: float) -> tuple[int, list[str]]:
    """(exit code, output lines) of `python -m repro.runner FOLDER` in a fresh process."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    command = [sys.executable, "-m", "repro.runner", str(folder.resolve()), *(["--device", device] if device else [])]
    try:
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return CANNOT_RUN, [f"CANNOT RUN: minify's oracle did not finish within {timeout:.0f} s"]
    return done.returncode, done.stdout.splitlines() or (done.stderr.strip().splitlines() or ["no output"])[-1:]


def bad_folder(folder: Path, manifest: dict) -> str | None:
    """Why the repro folder cannot run, seen without running it: a missing or empty inputs file."""
    name = manifest.get("inputs_file")
    if not name:
        return None
    path = folder / name
    if not path.is_file():
        return f"{path}: missing (repro.py loads its inputs from it)"
    if path.stat().st_size == 0:
        return f"{path}: empty (repro.py loads its inputs from it)"
    return None


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    if not ns.timeout > 0:
        print(f"minify: --timeout {ns.timeout}: must be greater than zero", file=sys.stderr)
        return CANNOT_RUN
    try:
        manifest = read_manifest(ns.folder)
    except ReproFolderError as exc:
        print(f"minify: {exc}", file=sys.stderr)
        return CANNOT_RUN
    problem = bad_folder(ns.folder, manifest)
    if problem:
        print(f"minify: {problem}", file=sys.stderr)
        return CANNOT_RUN
    print(f"replaying {ns.folder / REPRO}: expects {manifest['signature']} "
          f"(recorded with torch {manifest.get('torch')} on {manifest.get('device')})")
    if ns.device:
        code, lines = oracle_metrics(ns.folder, ns.device, ns.timeout)
        print("\n".join(lines))
        return code if code in (0, 1, CANNOT_RUN) else CANNOT_RUN
    result = run_repro(ns.folder / REPRO, timeout=ns.timeout)
    # Only its own verdict line counts: a traceback also ends with 1 (a repro.py that cannot load,
    # from before repro.py said CANNOT RUN), and is no answer on the bug.
    said = result.line.startswith("REPRODUCED") if result.returncode == 1 else \
        result.line.startswith("NOT REPRODUCED") if result.returncode == 0 else False
    if not said:
        print(f"minify: {ns.folder / REPRO} could not run (exit {result.returncode}): {result.line}", file=sys.stderr)
        return CANNOT_RUN
    if manifest.get("kind") not in ("crash", "hang"):
        _, lines = oracle_metrics(ns.folder, None, ns.timeout)
        print("\n".join(line for line in lines if line.startswith("  ")))  # the metric lines
    print(f"  ran in {result.seconds:.1f} s")
    print(result.line)
    return result.returncode
