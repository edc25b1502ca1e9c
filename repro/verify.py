"""Run a written repro.py the way a maintainer would: fresh process, another directory.

Most of a fresh `python repro.py` is torch.compile's one-time start-up: lazy imports, the
CPU ISA probe, pattern tables (about 7 of 9 s for a one-op repro on 2 cores).
`PrewarmedPython` is a fresh interpreter, started early, that pays it on a throwaway
function and then runs repro.py as `__main__` when asked: the same program, without the wait.
A "does not reproduce" from it is checked again with a cold `python repro.py`.
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from compiler import gpu_gate
from compiler.aoti_control import TURN_OFF_SOURCE
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
    `prewarmed` (a PrewarmedPython, or anything with its `run`), in a process that has paid
    torch's start-up; a repro that does not reproduce there is run again cold, so an answer
    of "no" never rests on the shortcut, unless `stopped()` says the caller stopped meanwhile
    (Ctrl-C: the prewarmed run was ended by it, and its answer is no answer)."""
    start = time.perf_counter()
    if gpu_gate.asserting():  # a device-assert run: a cold process, alone on the GPU until it is gone
        with gpu_gate.exclusive():
            return _cold(repro, timeout, args, start)
    if prewarmed is not None:
        done = prewarmed.run(repro, args or [], timeout)
        if done is not None:
            verification = _verdict(*done, start)
            if verification.reproduced or stopped():
                return verification
    return _cold(repro, timeout, args, start)


def _cold(repro: Path, timeout: float, args: list[str] | None, start: float) -> Verification:
    """`python repro.py ARGS` in a fresh interpreter, from a fresh temporary directory (one of
    the run's CUDA processes on a GPU: compiler/gpu_slots.py)."""
    slot = SLOTS.take()
    try:
        with tempfile.TemporaryDirectory(prefix="minify-verify-") as elsewhere:
            proc = subprocess.Popen([sys.executable, str(repro.resolve()), *(args or [])], cwd=elsewhere,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            try:
                stdout, stderr = proc.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                _end(proc)
                return Verification(False, -1, f"repro.py did not finish within {timeout:.0f} s",
                                    time.perf_counter() - start)
    finally:
        slot.release()
    return _verdict(proc.returncode, stdout, stderr, start)


def _end(proc: subprocess.Popen, grace: float = 5.0) -> None:
    """SIGTERM, `grace` seconds, then SIGKILL: never SIGKILL first to a process that may hold CUDA."""
    proc.terminate()
    try:
        proc.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()


# The control run: repro.py with nothing compiled (AOTInductor off too:
# compiler/aoti_control.py). TORCHDYNAMO_DISABLE is read at each
# torch.compile call (and inherited by a crash repro's child); config.disable covers a process
# that imported torch before the variable was set (a forked or prewarmed one).
_CONTROL = """import os, runpy, sys
os.environ["TORCHDYNAMO_DISABLE"] = "1"
import torch
torch._dynamo.config.disable = True
{aoti_off}
sys.argv[0] = {repro!r}
sys.path[0] = os.path.dirname({repro!r})
runpy.run_path({repro!r}, run_name="__main__")
"""


def run_control(repro: Path, timeout: float = 600.0, prewarmed=None) -> Verification:
    """repro.py run with the compiler disabled: a verified repro must pass (`NOT REPRODUCED`,
    exit 0); `reproduced` here means it passed. A failure seen in a prewarmed process is
    checked again cold, so "fails without the compiler too" never rests on the shortcut."""
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="minify-control-") as folder:
        control = Path(folder) / "control.py"
        control.write_text(_CONTROL.format(repro=str(repro.resolve()), aoti_off=TURN_OFF_SOURCE))
        done = prewarmed.run(control, [], timeout) if prewarmed is not None else None
        if done is None or not _passed(done[0], done[1]):
            try:
                proc = subprocess.run([sys.executable, str(control)], cwd=folder, capture_output=True, text=True,
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


# The interpreter's own program (`python -c`): it pays torch.compile's one-time start-up (lazy
# imports, the CPU ISA probe, pattern tables) on a throwaway function, forgets it, and waits for
# the script to run. Nothing of minify's is imported, as with `python repro.py`.
_BOOT = """
import json, os, runpy, sys
os.nice(10)  # spare-time work: the capture and the workers come first
import torch
# On the device workers warm up on (a GPU machine's first C++ compile costs 40-55 s on torch
# 2.11), without the pool of compile subprocesses repro.py does not use (each imports torch).
gate = os.environ.get('MINIFY_GPU_GATE')  # compiler/gpu_gate.py: CUDA is started with it held, shared
if gate:
    import fcntl
    gate = os.open(gate, os.O_RDWR | os.O_CREAT, 0o666)
    fcntl.flock(gate, fcntl.LOCK_SH)
try:
    with torch._inductor.config.patch(compile_threads=1, fx_graph_cache=False):
        torch.compile(lambda x: x * 2 + 1)(torch.ones(4, device='cuda' if torch.cuda.is_available() else 'cpu'))
except Exception:
    pass
if gate:
    os.close(gate)
torch._dynamo.reset()
job = json.loads(sys.stdin.readline() or 'null')
if job is None:
    sys.exit(0)
sys.stdin = open(os.devnull)
sys.argv = [job['script'], *job['args']]
sys.path[0] = os.path.dirname(job['script'])
code = 0
try:
    runpy.run_path(job['script'], run_name='__main__')
except SystemExit as stop:
    code = stop.code
except BaseException:
    import traceback
    traceback.print_exc()
    code = 1
# Ended as `python repro.py` ends (atexit handlers, flushed streams, its exit status), without the
# interpreter's teardown of torch.compile's objects and CUDA: a second or more, after the verdict.
import atexit
atexit._run_exitfuncs()
if code is not None and not isinstance(code, int):
    print(code, file=sys.stderr)
    code = 1
sys.stdout.flush()
sys.stderr.flush()
os._exit(code or 0)
"""


class PrewarmedPython:
    """One fresh interpreter for one repro run, started ahead of time (see the module doc)."""

    def __init__(self, slot=None):
        """`slot`: its place under the GPU's cap (compiler/gpu_slots.py); a needed one if none."""
        self.slot = slot or SLOTS.take()
        self.folder = tempfile.mkdtemp(prefix="minify-verify-")
        self.proc = subprocess.Popen([sys.executable, "-c", _BOOT], cwd=self.folder, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.slot.bind(self.proc, self.close if self.slot.optional else None)

    @classmethod
    def spare(cls) -> "PrewarmedPython | None":
        """One started ahead of need, where the GPU's cap leaves room (else None)."""
        slot = SLOTS.take(optional=True)
        return None if slot is None else cls(slot)

    def run(self, repro: Path, args: list[str], timeout: float) -> tuple[int, str, str] | None:
        """(exit status, stdout, stderr) of repro.py run as `__main__`; None if it could not run."""
        if not self.slot.promote() or self.proc.poll() is not None:  # ended, or its slot given to another
            self.close()
            return None
        job = json.dumps({"script": str(repro.resolve()), "args": list(args)}) + "\n"
        try:
            stdout, stderr = self.proc.communicate(job, timeout=timeout)
        except (subprocess.TimeoutExpired, OSError):
            self.close()
            return None
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
        return self.proc.returncode, stdout, stderr

    def close(self) -> None:
        if getattr(self, "closed", False):
            return
        self.closed = True
        if self.proc.poll() is None:
            _end(self.proc)
        else:
            self.proc.communicate()
        shutil.rmtree(self.folder, ignore_errors=True)


class PrewarmedSupply:
    """Keeps the next PrewarmedPython starting while minify works, so one is ready when a repro
    is written."""

    def __init__(self):
        self._ready: PrewarmedPython | None = PrewarmedPython.spare()

    def take(self, another: bool = False) -> PrewarmedPython:
        """The ready interpreter; with `another`, start the next one now (where the cap leaves room)."""
        ready = self._ready or PrewarmedPython()
        self._ready = PrewarmedPython.spare() if another else None
        return ready

    def close(self) -> None:
        if self._ready is not None:
            self._ready.close()
            self._ready = None
