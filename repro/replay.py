"""`minify replay DIR`: rerun a repro folder in fresh processes; print the metrics and the verdict.

repro.py runs first, from another directory, as a maintainer would run it: its one line is the
verdict and its exit code the command's (1 when the bug reproduces, 0 when it does not, 2 when
it cannot run or DIR is not a repro folder). Then minify's own oracle judges the same graph on
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

CANNOT_RUN = 2
ROOT = Path(__file__).resolve().parents[1]


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minify replay", description="Rerun a repro folder written by minify "
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


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    try:
        manifest = read_manifest(ns.folder)
    except ReproFolderError as exc:
        print(f"minify: {exc}")
        return CANNOT_RUN
    print(f"replaying {ns.folder / REPRO}: expects {manifest['signature']} "
          f"(recorded with torch {manifest.get('torch')} on {manifest.get('device')})")
    if ns.device:
        code, lines = oracle_metrics(ns.folder, ns.device, ns.timeout)
        print("\n".join(lines))
        return code if code in (0, 1, CANNOT_RUN) else CANNOT_RUN
    result = run_repro(ns.folder / REPRO, timeout=ns.timeout)
    if result.returncode not in (0, 1):
        print(f"minify: repro.py ended abnormally (exit {result.returncode}): {result.line}")
        return CANNOT_RUN
    if manifest.get("kind") not in ("crash", "hang"):
        _, lines = oracle_metrics(ns.folder, None, ns.timeout)
        print("\n".join(line for line in lines if line.startswith("  ")))  # the metric lines
    print(f"  ran in {result.seconds:.1f} s")
    print(result.line)
    return result.returncode
