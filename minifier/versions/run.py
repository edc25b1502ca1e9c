"""Run a repro folder's repro.py under one torch: a fresh process of that version's Python,
from a temporary folder (as a maintainer would run it), with nothing of minify's path."""
from __future__ import annotations

import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from minifier.versions.outcome import CANNOT_RUN, Expected, judge
from minifier.versions.venvs import CannotInstall, Python, clean_env, python_for
from repro.manifest import REPRO


@dataclass
class VersionRun:
    """One row of the table."""
    spec: str  # the version asked for
    torch: str | None  # the torch that ran it (None: none could be had)
    outcome: str
    why: str
    seconds: float
    where: str = ""  # this Python, or the venv's folder

    def to_dict(self) -> dict:
        return {"spec": self.spec, "torch": self.torch, "outcome": self.outcome, "why": self.why,
                "seconds": round(self.seconds, 1), "where": self.where}


def run_repro(expected: Expected, python: Path, timeout: float, env: dict | None = None
              ) -> tuple[str, str, float]:
    """(outcome, why, seconds) of `python repro.py` in a fresh folder."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="minify-versions-") as elsewhere:
        try:
            done = subprocess.run([str(python), str((expected.folder / REPRO).resolve())], cwd=elsewhere,
                                  env={**clean_env(), **(env or {})}, capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return CANNOT_RUN, f"did not finish within {timeout:.0f} s", time.perf_counter() - start
    outcome, why = judge(expected, done.returncode, done.stdout, done.stderr)
    return outcome, why, time.perf_counter() - start


def run_version(expected: Expected, spec: str, timeout: float, index_url: str | None = None,
                installer: str = "pip", say=lambda s: None) -> VersionRun:
    """Have a Python with torch `spec` (cached venv, or installed once), and run the repro under it."""
    start = time.perf_counter()
    try:
        python: Python = python_for(spec, index_url, installer, say)
    except CannotInstall as exc:
        return VersionRun(spec, None, CANNOT_RUN, str(exc), time.perf_counter() - start)
    say(f"torch {python.torch}: running {expected.folder / REPRO}")
    outcome, why, seconds = run_repro(expected, python.executable, timeout)
    return VersionRun(spec, python.torch, outcome, why, seconds, python.where)
