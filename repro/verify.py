"""Run a written repro.py the way a maintainer would: fresh process, another directory.

Most of a fresh `python repro.py` is torch.compile's one-time start-up: lazy imports, the
CPU ISA probe, pattern tables. The caller may
hand in a process that has paid it (`prewarmed`: one of the run's warm interpreters,
minifier/workers/interpreters.py, the supply its workers come from too), which runs repro.py as
`__main__`: the same program, without the wait. A "does not reproduce" from it is checked again
with a cold `python repro.py`.
"""
from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from compiler import gpu_gate
from compiler.boot import CONTROL_RUN
from compiler.gpu_slots import SLOTS

VERDICTS = ("REPRODUCED", "NOT REPRODUCED", "CANNOT RUN")


@dataclass
class Verification:
    reproduced: bool
    returncode: int
    line: str  # the repro's one-line verdict
    seconds: float
    output: str = ""  # everything the repro printed on stdout (metrics with --verbose)


def run_repro(repro: Path, timeout: float = 600.0, args: list[str] | None = None,
              prewarmed=None, stopped=lambda: False) -> Verification:
    """Run `python repro.py ARGS` from a fresh temporary directory and read its verdict. With
    `prewarmed` (anything with a `run(repro, args, timeout)`: a warm interpreter of the run's), in a process that has paid
    torch's start-up; a repro that does not reproduce there is run again cold, so an answer
    of "no" never rests on the shortcut, unless `stopped()` says the caller stopped meanwhile
    (Ctrl-C: the prewarmed run was ended by it, and its answer is no answer)."""
    start = time.perf_counter()
    if gpu_gate.asserting():  # a device-assert run: a cold process, alone on the GPU until it is gone
        slot = SLOTS.take()  # before the gate: a busy worker holds its slot while it waits for the gate
        with gpu_gate.exclusive():
            return _cold(repro, timeout, args, start, slot)
    if prewarmed is not None:
        done = prewarmed.run(repro, args or [], timeout)
        if done is not None:
            verification = _verdict(*done, start)
            if verification.reproduced or stopped():
                return verification
    return _cold(repro, timeout, args, start)


def _cold(repro: Path, timeout: float, args: list[str] | None, start: float, slot=None) -> Verification:
    """`python repro.py ARGS` in a fresh interpreter, from a fresh temporary directory (one of
    the run's CUDA processes on a GPU: compiler/gpu_slots.py; `slot`, if the caller took it)."""
    slot = slot or SLOTS.take()
    try:
        with tempfile.TemporaryDirectory(prefix="minify-verify-") as elsewhere:
            proc = subprocess.Popen([sys.executable, str(repro.resolve()), *(args or [])], cwd=elsewhere,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                end_process(proc)
                return Verification(False, -1, f"repro.py did not finish within {timeout:.0f} s",
                                    time.perf_counter() - start)
    finally:
        slot.release()
    return _verdict(proc.returncode, stdout, stderr, start)


def end_process(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM, `grace` seconds, then SIGKILL: never SIGKILL first to a process that may hold CUDA."""
    proc.terminate()
    try:
        proc.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


def run_control(repro: Path, timeout: float = 600.0, prewarmed=None) -> Verification:
    """repro.py run with the compiler disabled: a verified repro must pass (`NOT REPRODUCED`,
    exit 0); `reproduced` here means it passed. A failure seen in a prewarmed process is
    checked again cold, so "fails without the compiler too" never rests on the shortcut."""
    start = time.perf_counter()
    control, args = Path(CONTROL_RUN), [str(repro.resolve())]  # compiler/boot/control_run.py
    with tempfile.TemporaryDirectory(prefix="minify-control-") as folder:
        done = prewarmed.run(control, args, timeout) if prewarmed is not None else None
        if done is None or not _passed(done[0], done[1]):
            try:
                proc = subprocess.run([sys.executable, str(control), *args], cwd=folder, capture_output=True, text=True,
                                      timeout=timeout)
            except subprocess.TimeoutExpired:
                return Verification(False, -1, f"did not finish within {timeout:.0f} s", time.perf_counter() - start)
            done = (proc.returncode, proc.stdout, proc.stderr)
    result = _verdict(*done, start)
    return Verification(_passed(done[0], done[1]), result.returncode, result.line, result.seconds, result.output)


def _passed(returncode: int, stdout: str) -> bool:
    verdicts = [line for line in stdout.splitlines() if line.startswith(VERDICTS)]
    return returncode == 0 and bool(verdicts) and verdicts[-1].startswith("NOT REPRODUCED")


def _verdict(returncode: int, stdout: str, stderr: str, start: float) -> Verification:
    proc = subprocess.CompletedProcess([], returncode, stdout, stderr)
    verdicts = [line for line in proc.stdout.splitlines() if line.startswith(VERDICTS)]
    line = verdicts[-1] if verdicts else (proc.stderr.strip().splitlines() or ["no output"])[-1]
    return Verification(proc.returncode == 1 and line.startswith("REPRODUCED"), proc.returncode, line,
                        time.perf_counter() - start, proc.stdout)
