"""Each reduced bug's repro folder is written and verified (in a fresh process) while the search
for further bugs goes on on the workers; one at a time, in the order the bugs were found. Blame
runs beside each verification."""
from __future__ import annotations

import json
import math
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from compiler.graph_code import TRACING
from compiler import gpu_gate
from minifier.distributed.ranks import rank_words
from minifier.phases import Phases
from minifier.blame.search import blame
from minifier.capture.process import Capture
from minifier.graph.edit import canonical, graph_inputs
from minifier.search.bugs import Bug
from minifier.start.launch import Launched, Options
from minifier.workers.answer import Answer
from minifier.workers.ask import Asker
from minifier.workers.stop import STOP
from repro import error_text
from repro.info import ReproInfo
from repro.manifest import ReproFolderError, read_manifest
from repro.verify import run_control, run_repro
from repro.value_store import load_case_values
from repro.writer import write_repro


@dataclass
class ReproJob:
    """One reduced bug to write as a repro folder and verify: `final` is its reduced graph's
    answer, `prewarmed` what runs repro.py."""

    bug: Bug
    folder: Path
    ev: Asker  # asks the reduced graph's answer again, and carries its case folder and setup
    final: Answer
    prewarmed: Any = None


class Verifications:
    """The repro folders of one run: the first bug's in the output folder, later ones in bug-k/.
    `verifiers`, the run's warm interpreters (minifier/workers/interpreters.py), hands out what
    runs repro.py (None: no verification)."""

    def __init__(self, opts: Options, ui, launched: Launched, verifiers, capture: Capture, phases: Phases,
                 pool=None, deadline: float | None = None):
        self.opts, self.ui, self.launched, self.verifiers, self.phases = opts, ui, launched, verifiers, phases
        self.deadline = deadline  # --max-time's end (time.monotonic()): blame not started after it
        self.pool = pool  # the run's workers: blame's experiments are jobs of theirs
        self.capture = capture
        self.executor = ThreadPoolExecutor(1)
        self.rows: dict[int, Future] = {}  # id(bug) -> its report row, once verified
        self.error_runs: dict[str, error_text.ErrorRun | None] = {}  # repro.py -> its error text's run

    def error_run(self, repro: str | None) -> "error_text.ErrorRun | None":
        """The run started for `repro`'s error text (issue.md), if any; every other one is ended."""
        run = self.error_runs.pop(str(repro), None)
        for other in self.error_runs.values():
            if other is not None:
                other.end()
        self.error_runs.clear()
        return run

    def submit(self, bug: Bug, ev: Asker) -> None:
        """Write and verify `bug`'s repro; `ev` is the evaluator that reduced it."""
        final = Answer.from_wire(ev.outcomes([bug.small], stage=bug.stage)[0])  # cached: asked here, on this thread
        out = self.launched.out
        folder = out if not self.rows else out / f"bug-{len(self.rows) + 1}"
        prewarmed = self.verifiers.take(another=True) if self.verifiers is not None else None
        self.rows[id(bug)] = self.executor.submit(self.write_and_verify, ReproJob(bug, folder, ev, final, prewarmed))

    def row(self, bug: Bug) -> dict:
        return self.rows[id(bug)].result()

    def write_and_verify(self, job: ReproJob) -> dict:
        """Write the repro of `job.bug` and verify it; its report row."""
        with TRACING:  # in-process torch work beside the search's FX tracing (compiler.graph_code.TRACING)
            repro, row = write_repro_folder(job, self.opts, self.capture)
        if not gpu_gate.enabled():  # issue.md's error text, beside verification (on a GPU: last, alone)
            self.error_runs[str(repro)] = error_text.start(job.folder, read_manifest(job.folder))
        # Blame runs beside the fresh-process verification (each is one process that mostly waits on
        # its own import and compile); its answer is kept only if the repro verifies.
        with ThreadPoolExecutor(2) as side:
            late = self.time_left() <= 0
            blamed = side.submit(self.timed_blame, job.folder) if self.opts.blame and not late else None
            if self.opts.blame and late:
                row["blame_error"] = "not run: --max-time ran out"
            if self.opts.verify:
                self.ui.step(f"verifying {repro} in a fresh process")
                with self.phases.timed("verification"):
                    verification = run_repro(repro, timeout=verify_timeout(self.time_left()), prewarmed=job.prewarmed,
                                             stopped=lambda: STOP.stopped)
                    STOP.check()  # a run the stop ended says nothing of the repro
                    warm = self.verifiers.take() if self.verifiers.forks_warm else None  # forked: reusable
                    control = (run_control(repro, timeout=verify_timeout(self.time_left()), prewarmed=warm)
                               if verification.reproduced else None)
                STOP.check()
                row.update(verified=verification.reproduced, verify_line=verification.line)
                if control is not None and not control.reproduced:  # it fails with nothing compiled too
                    row.update(verified=False, verify_why=f"fails without the compiler too: {control.line}")
            row["seconds_to_repro"] = round(time.perf_counter() - self.launched.start, 2)  # script start to verified
            planted = (side.submit(self.without_plant, job)
                       if job.ev.setup.injections and row.get("verified") and self.time_left() > 0 else None)
            if blamed is not None and row.get("verified") is not False:
                row.update(blamed.result())
                STOP.check()
            if planted is not None:
                row.update(planted.result())
                STOP.check()
        if row.get("plant") == "not needed":  # after blame, which reads the folder: the repro to file has no plant
            with TRACING:
                write_repro_folder(job, self.opts, self.capture, plant=False)
        return row

    def without_plant(self, job: ReproJob) -> dict:
        """Whether the finding is the planted bug: its repro written without the plant, run in a
        fresh process. A repro that still fails is a real bug found beside the plant."""
        spare = replace(job, folder=self.launched.work / f"without-plant-{job.folder.name}")
        with TRACING:
            repro, _ = write_repro_folder(spare, self.opts, self.capture, plant=False)
        run = run_repro(repro, timeout=verify_timeout(self.time_left()), stopped=lambda: STOP.stopped)
        if run.reproduced:
            return {"plant": "not needed", "plant_line": run.line}
        return {"plant": "needed", "plant_line": run.line}


    def time_left(self) -> float:
        return math.inf if self.deadline is None else self.deadline - time.monotonic()

    def timed_blame(self, folder: Path) -> dict:
        with self.phases.timed("blame"):
            return blame_folder(folder, self.ui, self.pool)


def verify_timeout(left: float, longest: float = 600.0, grace: float = 60.0) -> float:
    """How long repro.py may run in verification: at most `longest`, and past --max-time's end
    (`left` seconds away, negative once passed) by at most `grace`: a verified repro is the run's
    answer, but --max-time bounds the run."""
    return max(grace, min(longest, left + grace))


def write_repro_folder(job: ReproJob, opts: Options, capture: Capture, plant: bool = True) -> tuple[Path, dict]:
    """repro.py and its folder for `job.bug` (`plant`: with the bugs planted by --inject); its
    path and the report row so far."""
    bug, folder, ev, final = job.bug, job.folder, job.ev, job.final
    values = load_case_values(ev.case_dir)
    setup, seed = ev.setup if plant else replace(ev.setup, injections=()), None
    if final.seeded:  # only from one seed with Inductor drawing random numbers as eager does
        setup, seed = replace(setup, spec=setup.spec.seeded()), 0
    info = ReproInfo(signature=bug.signature, kind=bug.kind, stage=bug.stage,
                     message=final.message or bug.message, setup=setup,
                     source=f"{opts.script.name}{rank_words(capture.script)}, graph {bug.graph} of "
                            f"{len(capture.graphs)}",
                     judging=opts.judging, seed=seed,
                     script=opts.script.name, graph=bug.graph,
                     hang_limit=ev.timeout if bug.kind == "hang" else None)
    small = canonical(bug.small)  # deterministic names and input order: one bug, one repro
    repro = write_repro(folder, small, graph_inputs(small, values), info)
    manifest = json.loads((folder / "repro.json").read_text())
    row = {"repro": str(repro), "inputs": str(folder / manifest["inputs_file"]) if manifest.get("inputs_file")
           else None, "final_metrics": final.extra.get("metrics"), "reference": final.extra.get("reference"),
           "graph_code": manifest["module_source"]}
    return repro, row


def blame_folder(folder: Path, ui, pool=None) -> dict:
    ui.step(f"finding the compiler part to blame for {folder.name}")
    try:
        return {"blame": blame(folder, say=ui.step, pool=pool)}  # also written to folder/blame.json
    except ReproFolderError as exc:
        return {"blame_error": str(exc)}
