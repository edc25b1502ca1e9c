"""What every stage of one run shares (the options, the display, the started processes, the
worker pool, the budget, the phase clock): made once by the pipeline, handed to each stage."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minifier.phases import Phases
from minifier.reduce.budget import Budget
from minifier.start.launch import Launched, Options
from minifier.workers.pool import WorkerPool


@dataclass
class Session:
    """What every stage of one run shares, fixed when it starts: the options, the progress
    display, the started processes, the worker pool, the reduction budget (shared by every
    reduction; it records why one stopped early), what runs repro.py to verify it and blame's
    warm probe processes."""

    opts: Options
    ui: Any
    launched: Launched
    pool: WorkerPool
    verifiers: Any
    budget: Budget
    phases: Phases = field(default_factory=Phases)  # wall seconds per phase (the report's timing table)
    early: Any = None  # first checks asked while the capture runs (minifier.localize.early_checks.EarlyChecks)
    capture: Any = None  # what the capture recorded, once it ended (minifier.capture.process.Capture)
    verifications: Any = None  # the repro folders written and verified (minifier.emit.repro_folders), once begun

    @property
    def out(self) -> Path:
        return self.launched.out

    @property
    def work(self) -> Path:
        return self.launched.work

    @property
    def start(self) -> float:
        return self.launched.start
