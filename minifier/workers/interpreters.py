"""The run's one supply of warm interpreters: the workers' processes and those that run repro.py.

Both kinds pay torch's start-up before their work arrives. On a CPU build of torch each is forked
from the zygote (minifier/workers/zygote.py), which paid it once for all of them. Where no zygote
forks warm (a CUDA build: a process that touched CUDA must not fork), each is a fresh interpreter
that imports torch and compiles once itself: a worker (`python -m minifier.workers.worker`, or a
child of the cold zygote, which starts CUDA itself), or a repro runner
(compiler/boot/prewarmed_repro.py), started ahead of need. Each takes its place under the GPU's
cap (compiler/gpu_slots.py) from here: workers, their spares and the verifier count alike.
"""
from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import threading
from collections import Counter
from pathlib import Path

from compiler.boot import PREWARMED_REPRO, RUN_MODULE, wire
from compiler.gpu_slots import SLOTS, CudaSlots, Slot
from minifier.workers.zygote import Zygote, fork_module, run_script, supported as zygote_supported
from repro.verify import end_process


def module_command(module: str) -> list[str]:
    """`python -m module`, except that this project's packages come before the working
    directory on sys.path, so a user's own `compiler.py` or `repro.py` cannot shadow them
    (compiler/boot/run_module.py)."""
    return [sys.executable, RUN_MODULE, module]


class WarmInterpreters:
    """Hands out warm processes: `worker` for the pool, `take` for repro.py's verification.
    `started` counts what it handed out, by kind ('worker', 'repro')."""

    def __init__(self, zygote: Zygote | None = None, slots: CudaSlots = SLOTS, owns_zygote: bool = False):
        """`zygote`: the run's (closed by its owner, unless `owns_zygote`); `slots`: the GPU's cap."""
        self.zygote, self.slots, self.owns_zygote = zygote, slots, owns_zygote
        self.started: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.ready: PrewarmedPython | None = None  # the next repro runner, warming (no warm zygote)

    @classmethod
    def own(cls, log_dir: Path) -> "WarmInterpreters":
        """A supply with a zygote of its own where torch allows one (a pool made outside a run)."""
        return cls(Zygote(log_dir / "zygote.log") if zygote_supported() else None, owns_zygote=True)

    @property
    def forks_warm(self) -> bool:
        """Its processes are forked from a zygote that compiled once (a CPU build of torch)."""
        return self.zygote is not None and not self.zygote.cold

    def slot(self, optional: bool = False) -> Slot | None:
        """A place under the GPU's cap for a process about to start (None: an optional one, no room)."""
        return self.slots.take(optional)

    def _count(self, kind: str) -> None:
        with self.lock:
            self.started[kind] += 1

    def worker(self, log_path: Path, log, fork: bool = True):
        """A worker's process, its stderr appended to `log_path` (`log`, open on it): forked from the
        zygote (warm, or cold: it starts CUDA and compiles once itself) unless `fork` is False or
        none forks, else a fresh `python -m minifier.workers.worker`."""
        zygote = self.zygote if fork else None
        forked = [] if zygote is None or zygote.cold else ["--forked"]  # its zygote compiled once already
        proc = fork_module(zygote, "minifier.workers.worker", log_path.parent, log_path, forked)
        if proc is not None:
            log.write(f"forked from the {zygote.mode} zygote\n".encode())
            log.flush()
        proc = proc or subprocess.Popen(module_command("minifier.workers.worker"), stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=log, cwd=str(log_path.parent),
                                        start_new_session=True)  # a Ctrl-C is minify's to handle
        self._count("worker")
        return proc

    def take(self, another: bool = False) -> "ForkedRun | PrewarmedPython":
        """What runs the next repro.py warm: where the zygote forks warm, a child forked when it
        runs; else the interpreter started ahead (a needed one now if none), and with `another`
        the next starts now, where the GPU's cap leaves room."""
        if self.forks_warm:
            return ForkedRun(self)
        with self.lock:
            ready, self.ready = self.ready, None
        ready = ready or self._repro_runner(optional=False)
        if another:
            self.keep_ready()
        return ready

    def keep_ready(self) -> None:
        """Start the next repro runner now (no warm zygote; where the GPU's cap leaves room)."""
        if not self.forks_warm and self.ready is None:
            self.ready = self._repro_runner(optional=True)

    def _repro_runner(self, optional: bool) -> "PrewarmedPython | None":
        slot = self.slot(optional)
        if slot is None:
            return None
        self._count("repro")
        return PrewarmedPython(slot)

    def run_forked(self, script: Path, args: list[str], timeout: float) -> tuple[int, str, str] | None:
        """`python script ARGS` in a child forked from the zygote, from a fresh temporary folder."""
        self._count("repro")
        with tempfile.TemporaryDirectory(prefix="minify-verify-") as elsewhere:
            return run_script(self.zygote, script.resolve(), args, Path(elsewhere), timeout)

    def kill_group(self) -> None:
        """At a stop: its own zygote and every child forked from it, ended."""
        if self.owns_zygote and self.zygote is not None:
            self.zygote.kill_group()

    def close(self) -> None:
        """End the repro runner still waiting, and its own zygote (a run's zygote is the run's to close)."""
        with self.lock:
            ready, self.ready = self.ready, None
        if ready is not None:
            ready.close()
        if self.owns_zygote and self.zygote is not None:
            self.zygote.close()
            self.zygote = None


class ForkedRun:
    """repro.py run in a child forked from the zygote when asked (repro.verify.run_repro's `prewarmed`)."""

    def __init__(self, supply: WarmInterpreters):
        self.supply = supply

    def run(self, repro: Path, args: list[str], timeout: float) -> tuple[int, str, str] | None:
        return self.supply.run_forked(repro, args, timeout)

    def close(self) -> None:
        pass


class PrewarmedPython:
    """One fresh interpreter for one repro run, started ahead of time: it pays torch.compile's
    start-up on a throwaway function, then runs repro.py as `__main__` (compiler/boot/prewarmed_repro.py)."""

    def __init__(self, slot: Slot):
        """`slot`: its place under the GPU's cap (compiler/gpu_slots.py), from WarmInterpreters."""
        self.slot = slot
        self.closed = False
        self.folder = tempfile.mkdtemp(prefix="minify-verify-")
        self.proc = subprocess.Popen([sys.executable, PREWARMED_REPRO], cwd=self.folder, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.slot.bind(self.proc, self.close if self.slot.optional else None)

    def run(self, repro: Path, args: list[str], timeout: float) -> tuple[int, str, str] | None:
        """(exit status, stdout, stderr) of repro.py run as `__main__`; None if it could not run."""
        if not self.slot.promote() or self.proc.poll() is not None:  # ended, or its slot given to another
            self.close()
            return None
        try:  # the job on stdin (compiler/boot/wire.py); stdout and stderr are the repro's alone
            wire.write_message(self.proc.stdin.buffer, {"script": str(repro.resolve()), "args": list(args)})
            stdout, stderr = self.proc.communicate(timeout=timeout)
        except (subprocess.TimeoutExpired, OSError):
            self.close()
            return None
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
        return self.proc.returncode, stdout, stderr

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if self.proc.poll() is None:
            end_process(self.proc)
        else:
            self.proc.communicate()
        shutil.rmtree(self.folder, ignore_errors=True)
