"""Run a written repro.py the way a maintainer would: fresh process, another directory."""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

VERDICTS = ("REPRODUCED", "NOT REPRODUCED", "CANNOT RUN")


@dataclass
class Verification:
    reproduced: bool
    returncode: int
    line: str  # the repro's one-line verdict
    seconds: float
    output: str = ""  # everything the repro printed on stdout (metrics with --verbose)


def run_repro(repro: Path, timeout: float = 600.0, args: list[str] | None = None) -> Verification:
    """Run `python repro.py ARGS` from a fresh temporary directory and read its verdict."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="minify-verify-") as elsewhere:
        try:
            proc = subprocess.run([sys.executable, str(repro.resolve()), *(args or [])], cwd=elsewhere,
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return Verification(False, -1, f"repro.py did not finish within {timeout:.0f} s",
                                time.perf_counter() - start)
    verdicts = [line for line in proc.stdout.splitlines() if line.startswith(VERDICTS)]
    line = verdicts[-1] if verdicts else (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return Verification(proc.returncode == 1 and line.startswith("REPRODUCED"), proc.returncode, line,
                        time.perf_counter() - start, proc.stdout)
