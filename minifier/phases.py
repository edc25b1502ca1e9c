"""Where a run's time goes: wall seconds per phase, for the report's timing table.

Phases overlap on purpose (a repro is verified and blamed while the search for the next bug
and localization go on), so they need not add up to the wall time: the table says where the
waiting is, not a partition of it. Safe to use from the side threads that verify and blame.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field

ORDER = ("capture", "pieces", "confirmation", "stage checks", "reduction", "localization", "verification", "blame",
         "program layers", "program reduction")


@dataclass
class Phases:
    seconds: dict[str, float] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, name: str, seconds: float) -> None:
        with self.lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    @contextmanager
    def timed(self, name: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def to_dict(self) -> dict[str, float]:
        """In pipeline order, rounded, only the phases that ran."""
        names = [n for n in ORDER if n in self.seconds] + [n for n in self.seconds if n not in ORDER]
        return {n: round(self.seconds[n], 2) for n in names}
