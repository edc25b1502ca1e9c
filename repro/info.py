"""What a repro is of: the failure the oracle saw, how the graph was compiled and run, how it was
judged, where it came from. repro/writer.py writes repro.py from it, repro/checks.py its check."""
from __future__ import annotations

from dataclasses import dataclass

from compiler.judging import Judging
from compiler.stages import CompileSetup


@dataclass
class ReproInfo:
    signature: str
    kind: str
    stage: str
    message: str
    setup: CompileSetup  # how the graph was compiled and run: spec, bugs planted (as dicts), modes
    source: str  # where the graph came from, for the header
    judging: Judging = Judging()  # how the oracle judged: the run's tolerances, strict, rungs turned off
    seed: int | None = None  # the oracle re-seeded every run from this (graphs that draw random numbers)
    script: str = ""  # the user's script, for names of generated tests and the issue text
    graph: int | None = None  # index of the failing graph in the script
    hang_limit: float | None = None  # a hang: seconds a warm worker's run took to count as hanging
