"""Blame's experiments asked of warm workers, as experiment jobs (minifier/workers/experiment.py).

The run's own WorkerPool answers them beside the evaluator's checks (or, for `minify bisect`,
a pool started the same way): no processes or protocol of blame's own. A worker that dies or
stops answering yields the crash or hang outcome the repro would have shown (the pool signs it
with the repro's stage). `isolate` (crashes, hangs, device asserts) asks each experiment's
worker to end after it; on a GPU such a job holds the gate alone until its worker is reaped
(compiler/gpu_gate.py, docs/gpu-safety.md).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from compiler import gpu_gate
from compiler.gpu_slots import GPU_WORKERS, SLOTS
from minifier.workers.experiment import ExperimentJob, read_record
from minifier.workers.pool import WorkerPool
from minifier.workers.zygote import fork_mode
from repro.manifest import ReproFolderError

STARTUP_TIMEOUT = 300.0
OWN_POOL_SIZE = 3  # `minify bisect`: the search's experiments and two started ahead, side by side
DIED = ("crash", "hang")  # kinds the pool gives the answer of a worker that died or went silent


@dataclass
class Asked:
    """One experiment asked: its answer once the worker has given it, with what was recorded."""

    future: Future
    record_file: str | None
    jobs: "BlameJobs"

    def result(self) -> dict:
        try:
            answer = self.future.result()
        finally:
            record = read_record(self.record_file)
            if self.record_file:
                with contextlib.suppress(OSError):
                    os.unlink(self.record_file)
        if answer.get("kind") in DIED:
            self.jobs.restarts += 1
        return {**answer, **record}

    def cancel(self) -> None:
        """Not asked after all, if no worker has taken it yet."""
        self.future.cancel()


class BlameJobs:
    """The experiments of one repro folder, each a job of `pool`."""

    def __init__(self, pool: WorkerPool, folder: Path, stage: str, isolate: bool = False, timeout: float = 300.0):
        self.pool, self.folder, self.stage = pool, str(folder.resolve()), stage
        self.isolate, self.timeout = isolate, timeout
        self.restarts = 0  # experiments whose worker died or hung
        self.records = tempfile.mkdtemp(prefix="minify-blame-")
        self.asked = 0

    def start(self) -> Future:
        """Ask what the search plans with (device, flips, the script's defaults): see `info`."""
        return self.pool.submit(ExperimentJob(self.folder, stage=self.stage, timeout=STARTUP_TIMEOUT).to_dict())

    def info(self, started: Future) -> dict:
        """The answer `start` asked for; ReproFolderError if a worker could not load the repro."""
        info = started.result()
        if info.get("status") != "ready":
            raise ReproFolderError(f"{self.folder}: the blame worker could not load the repro "
                                   f"({info.get('message')})")
        return info

    def submit(self, experiment) -> Asked:
        """Ask `experiment` now; its answer comes from Asked.result."""
        record_file = None
        if experiment.record:
            self.asked += 1
            record_file = os.path.join(self.records, f"record-{self.asked}.jsonl")
        job = ExperimentJob(self.folder, experiment.to_dict(), record_file, self.stage, self.timeout, self.isolate)
        return Asked(self.pool.submit(job.to_dict(), alone=self.isolate), record_file, self)

    def run(self, experiment) -> dict:
        return self.submit(experiment).result()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            for name in os.listdir(self.records):
                os.unlink(os.path.join(self.records, name))
            os.rmdir(self.records)


def gpu_safety() -> None:
    """On a GPU machine (a CUDA build of torch), the GPU gate and the cap on CUDA processes, as a
    run turns them on (minifier/start/launch.py, docs/gpu-safety.md): for `minify bisect`."""
    if fork_mode() == "cold" and gpu_gate.gpu_present():
        gpu_gate.enable()
        SLOTS.enable()


@contextlib.contextmanager
def own_pool(pool: WorkerPool | None) -> Iterator[WorkerPool]:
    """`pool`, or one started the way a run starts its own (warm workers forked from a zygote
    where torch allows it; under the GPU cap where `gpu_safety` turned it on), its logs in a
    temporary folder, closed after."""
    if pool is not None:
        yield pool
        return
    size = min(OWN_POOL_SIZE, GPU_WORKERS) if SLOTS.on else OWN_POOL_SIZE
    with tempfile.TemporaryDirectory(prefix="minify-bisect-") as logs:
        started = WorkerPool(size, Path(logs), timeout=STARTUP_TIMEOUT)
        try:
            yield started
        finally:
            started.close()
