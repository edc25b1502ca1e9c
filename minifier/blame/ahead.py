"""Blame experiments started before the search reaches them, as jobs of their own.

On a GPU repro the search's first code-path probe compiles the graph for the CPU, and a
process's first C++ compile costs seconds (tens of them in a fresh one on a GPU machine: Inductor's
vector-ISA checks each start a Python that imports torch). Run after the baseline, it was most
of blame's time; asked beside the baseline and the config probes from the start, it is hidden
behind them on another worker.

Where every experiment needs a worker of its own anyway (a crash or a device-side assert spoils
the one it ran in), those the search asks next whatever the answers are start side by side too.
"""
from __future__ import annotations

import threading

from compiler.subsystems import Experiment
from minifier.blame.jobs import Asked, BlameJobs


class AheadRuns:
    """Experiments (by the search's cache key) asked now; `take` waits for one's answer."""

    def __init__(self, jobs: BlameJobs, experiments: dict[str, Experiment]):
        self.jobs = jobs
        self.lock = threading.Lock()
        self.closed = False
        self.asked: dict[str, Asked] = {}
        self.start(experiments)

    def start(self, experiments: dict[str, Experiment]) -> None:
        """Ask these too (by key; one asked already is left running)."""
        with self.lock:
            for key, experiment in experiments.items():
                if key not in self.asked and not self.closed:
                    self.asked[key] = self.jobs.submit(experiment)

    def take(self, key: str) -> dict | None:
        """The answer of the experiment asked under `key` (waiting for it), or None (never asked,
        or its job failed: the search asks it again)."""
        with self.lock:
            asked = self.asked.pop(key, None)
        if asked is None or asked.future.cancelled():
            return None
        try:
            return asked.result()
        except Exception:  # the search asks it itself instead
            return None

    def close(self) -> None:
        """Those no worker has taken yet are not asked: the search ended without needing them."""
        with self.lock:
            self.closed = True
            left = list(self.asked.values())
            self.asked = {}
        for asked in left:
            asked.cancel()
