"""A cap on the CUDA processes one run keeps beside its main process and its capture.

Each of minify's helper processes on a GPU holds a CUDA context: workers (blame's experiments
are their jobs), their spares, the interpreter that verifies repro.py. Started freely
a device-assert run had eight or more at once, each creating or tearing down a context next to
an assert. Here every such process takes a slot first: at most CAP are alive at once. A process
kept only to be warm when asked for (a spare worker, a ready probe, a prewarmed verifier) is
`optional`: it starts only where a slot is free, and one still idle gives its slot up (it is
ended) when a needed process wants one. A needed process waits for a slot, at most WAIT seconds
(then it starts anyway: a stalled run would be worse). Off (no cap) on a CPU machine.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

CAP = 4  # CUDA processes at once besides the main process and the capture
GPU_WORKERS = 2  # workers at most on a GPU (-j above is lowered): two of the CAP
WAIT = 60.0


class Slot:
    """One process's place: counted until the process bound to it ends (or it is released)."""

    def __init__(self, owner: "CudaSlots", optional: bool):
        self.owner, self.optional = owner, optional
        self.proc = None
        self.evict: Callable[[], None] | None = None
        self.released = False
        self.rank = 0  # among idle ones, the lowest rank gives its slot up first

    def bind(self, proc, evict: Callable[[], None] | None = None) -> None:
        """The process holding this slot; `evict` ends it, for an optional one still idle."""
        with self.owner.changed:
            self.proc, self.evict = proc, evict

    def demote(self, evict: Callable[[], None], rank: int = 1) -> None:
        """Idle again (a worker back in its pool's queue): its slot may go to a needed process,
        after those of processes kept only to be ready (rank 0)."""
        with self.owner.changed:
            self.optional, self.evict, self.rank = True, evict, rank

    def promote(self) -> bool:
        """An optional process taken into use: needed from now on. False if it was evicted."""
        with self.owner.changed:
            self.optional = False
            return not self.released

    def release(self) -> None:
        with self.owner.changed:
            self.released = True
            self.owner.changed.notify_all()

    def alive(self) -> bool:
        if self.released:
            return False
        return self.proc is None or self.proc.poll() is None


class CudaSlots:
    def __init__(self, cap: int = CAP, wait: float = WAIT):
        self.cap, self.wait, self.on = cap, wait, False
        self.changed = threading.Condition()
        self.slots: list[Slot] = []
        self.peak = 0

    def enable(self) -> None:
        self.on = True

    def _live(self) -> list[Slot]:
        self.slots = [s for s in self.slots if s.alive()]
        return self.slots

    def take(self, optional: bool = False) -> Slot | None:
        """A slot for a process about to start; None for an optional one when none is free."""
        with self.changed:
            slot = Slot(self, optional)
            if not self.on:
                return slot
            deadline = time.monotonic() + self.wait
            while len(self._live()) >= self.cap:
                if optional:
                    return None
                idle = sorted((s for s in self.slots if s.optional and s.evict is not None), key=lambda s: s.rank)
                if idle:
                    victim = idle[0]
                    victim.released = True
                    self.changed.release()
                    try:
                        victim.evict()
                    finally:
                        self.changed.acquire()
                    continue
                left = deadline - time.monotonic()
                if left <= 0:
                    break  # needed: started over the cap rather than never
                self.changed.wait(min(left, 0.2))  # ends are seen by polling
            self.slots.append(slot)
            self.peak = max(self.peak, len(self._live()))
            return slot


SLOTS = CudaSlots()  # the run's, enabled by launch on a GPU machine
