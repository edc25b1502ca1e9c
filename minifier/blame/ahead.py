"""Blame experiments started before the search reaches them, each in a process of its own.

On a GPU repro the search's first code-path probe compiles the graph for the CPU, and a fresh
process's first C++ compile costs 40-55 s on a GPU machine (Inductor's vector-ISA checks each
start a Python that imports torch). Run after the baseline, it was most of blame's time; run
beside the baseline and the config probes from the start, it is hidden behind them.

Where every experiment needs a fresh process anyway (a device-side assert spoils the context of
the one it ran in), those the search asks next whatever the answers are start side by side too.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from compiler import gpu_gate
from compiler.subsystems import Experiment
from minifier.blame.probe_worker import BlameWorker

MOST_AT_ONCE = 6  # processes of their own at once (two first experiments, four early ones)
MOST_AT_ONCE_GPU = 1


class AheadRuns:
    """Experiments (by the search's cache key) running now; `take` waits for one's answer."""

    def __init__(self, folder: Path, stage: str, experiments: dict[str, Experiment], timeout: float,
                 zygote=None, ready=None):
        """`ready(device)` gives a warm process for an experiment's device, or None (see BlameWorker)."""
        self.workers: list[BlameWorker] = []
        self.lock = threading.Lock()
        self.closed = False
        self.args = (folder, stage, timeout, zygote, ready)
        # On a GPU the isolated experiments run one at a time anyway (compiler/gpu_gate.py): one beside the search's
        at_once = MOST_AT_ONCE_GPU if gpu_gate.enabled() else MOST_AT_ONCE
        self.executor = ThreadPoolExecutor(at_once, thread_name_prefix="minify-blame-ahead")
        self.futures: dict[str, Future] = {}
        self.start(experiments)

    def start(self, experiments: dict[str, Experiment]) -> None:
        """Start these too (by key; one started already is left running)."""
        for key, experiment in experiments.items():
            if key not in self.futures:
                self.futures[key] = self.executor.submit(self._run, experiment, *self.args)

    def _run(self, experiment: Experiment, folder: Path, stage: str, timeout: float, zygote,
             ready) -> dict | None:
        warm = (lambda: ready(experiment.device)) if ready is not None else None
        worker = BlameWorker(folder, stage, isolate=True, timeout=timeout, zygote=zygote, ready=warm)
        with self.lock:
            if self.closed:
                return None
            self.workers.append(worker)
        try:
            answer = worker.run(experiment)
        except Exception:  # the search runs it itself instead
            return None
        finally:
            worker.close()
        with self.lock:  # killed by close: its crash is not the experiment's answer
            return None if self.closed else answer

    def take(self, key: str) -> dict | None:
        """The answer of the experiment started under `key` (waiting for it), or None."""
        future = self.futures.pop(key, None)
        if future is None or future.cancelled():
            return None
        return future.result()

    def close(self) -> None:
        """Kill what still runs: the search ended without needing it."""
        with self.lock:
            self.closed = True
            workers = list(self.workers)
        for worker in workers:
            worker.close()
        self.executor.shutdown(wait=False, cancel_futures=True)
