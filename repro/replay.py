"""`minify replay DIR`: rerun a repro folder in a fresh process; print its verdict and metrics.

The exit code is the repro's own: 1 when the bug reproduces, 0 when it does not, 2 when it
cannot run (or DIR is not a repro folder).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from repro.manifest import REPRO, ReproFolderError, read_manifest
from repro.verify import run_repro

CANNOT_RUN = 2


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minify replay", description="Rerun a repro folder written by minify "
                                "in a fresh process, from another directory; print the verdict and metrics.")
    p.add_argument("folder", type=Path, help="the folder that holds repro.py")
    p.add_argument("--device", help="run on this device instead of the recorded one (e.g. cuda)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds before giving up (default 1800)")
    return p


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    try:
        manifest = read_manifest(ns.folder)
    except ReproFolderError as exc:
        print(f"minify: {exc}")
        return CANNOT_RUN
    print(f"replaying {ns.folder / REPRO}: expects {manifest['signature']} "
          f"(recorded with torch {manifest.get('torch')} on {manifest.get('device')})")
    args = ["--verbose", *(["--device", ns.device] if ns.device else [])]
    result = run_repro(ns.folder / REPRO, timeout=ns.timeout, args=args)
    for line in result.output.splitlines():
        if line.startswith("  "):  # the metric lines of --verbose
            print(line)
    if result.returncode not in (0, 1, CANNOT_RUN):
        print(f"minify: repro.py ended abnormally (exit {result.returncode}): {result.line}")
        return CANNOT_RUN
    print(f"  ran in {result.seconds:.1f} s")
    print(result.line)
    return result.returncode
