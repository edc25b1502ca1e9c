"""Blame's probe processes started when a GPU run starts, warm (torch imported, CUDA started,
a first compile done), each waiting for the repro folder.

Where no zygote forks warm processes (a CUDA build of torch), each blame probe was a fresh
Python that imported torch, started CUDA and paid its first compile after blame began: 4-5 s
per probe on the H200, and a device-side assert's search takes a fresh process per experiment.
Started with the run, they are ready when blame asks: `take` hands one out and starts its
replacement.
"""
from __future__ import annotations

import subprocess
import tempfile
import threading
from dataclasses import dataclass
from typing import IO

from compiler.gpu_slots import SLOTS, Slot
from minifier.blame.probe_worker import ROOT, start_process
from minifier.workers.reap import end_now, kill_soon
from minifier.workers.zygote import fork_module


ZYGOTE_WAIT = 60.0  # seconds the first probes wait for the zygote before starting fresh


@dataclass
class ReadyChild:
    """`python -m minifier.blame.probe_worker --ready DEVICE`: warms up, then reads the folder."""

    proc: subprocess.Popen
    log: IO
    device: str
    slot: Slot  # its place under the GPU's cap: optional until taken


def start_ready(device: str, zygote=None) -> ReadyChild | None:
    """Forked from `zygote` (a CUDA build's, which only imports) once it is ready to fork: it
    pays no `import torch`, beside workers replaced after a device assert. Else a fresh process:
    the first probes start while the zygote is still being born. None where the GPU's cap
    (compiler/gpu_slots.py) leaves no room for a process kept only to be ready."""
    slot = SLOTS.take(optional=True)
    if slot is None:
        return None
    log = tempfile.TemporaryFile(mode="w+")
    forked = fork_module(zygote, "minifier.blame.probe_worker", ROOT, log, ["--ready", device], text=True) \
        if zygote is not None and zygote.ready and not zygote.dead else None
    proc = forked or start_process(["--ready", device], log)
    slot.bind(proc, lambda: end_now(proc))
    return ReadyChild(proc, log, device, slot)


class ReadyProbes:
    """Warm probe processes by device (`counts`: how many to keep ready of each)."""

    def __init__(self, counts: dict[str, int], zygote=None):
        """With a `zygote` (a CUDA build's, still being born beside the capture), the probes are
        forked from it once it is ready: fresh ones started with the run imported torch beside
        the capture and the workers, and on the H100 a short run's blame waited 4 s for them."""
        self.lock = threading.Lock()
        self.closed = False
        self.zygote = zygote
        self.ready: dict[str, list[ReadyChild]] = {device: [] for device in counts}
        if zygote is None:
            self._fill(counts)
        else:
            threading.Thread(target=self._fill_when_ready, args=(counts,), daemon=True, name="probes").start()

    def _fill_when_ready(self, counts: dict[str, int]) -> None:
        self.zygote.wait_ready(ZYGOTE_WAIT)  # not ready by then (or refused): fresh processes
        self._fill(counts)

    def _fill(self, counts: dict[str, int]) -> None:
        with self.lock:
            if not self.closed:
                for device, n in counts.items():
                    self._start(device, n)

    def take(self, device: str) -> ReadyChild | None:
        """A ready process, warmed for `device` where one is kept (any other has torch imported at
        least); its replacement starts now. None once closed or when none is kept."""
        with self.lock:
            if self.closed or not self.ready:
                return None
            device = device if device in self.ready else next(iter(self.ready))
            waiting = self.ready[device]
            while waiting:
                child = waiting.pop(0)
                alive = child.slot.promote() and child.proc.poll() is None  # not given up to a needed one
                self._start(device, 1)
                if alive:
                    return child
                child.log.close()
            return None

    def _start(self, device: str, n: int) -> None:
        """`n` more ready for `device`, as many as the GPU's cap leaves room for (lock held)."""
        for _ in range(n):
            child = start_ready(device, self.zygote)
            if child is None:
                return
            self.ready.setdefault(device, []).append(child)

    def add(self, device: str, n: int) -> None:
        """Keep `n` more ready for `device` from now on (each taken one is replaced)."""
        with self.lock:
            if not self.closed:
                self._start(device, n)

    def close(self) -> None:
        """Kill the processes nobody took, waiting for none (each CUDA teardown takes a while:
        their ends are reaped on threads)."""
        with self.lock:
            self.closed = True
            left = [child for waiting in self.ready.values() for child in waiting]
            self.ready = {}
        for child in left:
            kill_soon(child.proc)
            child.log.close()


def cuda_machine() -> bool:
    """A GPU this torch can use (the parent has imported torch already)."""
    import torch

    return torch.cuda.is_available()
