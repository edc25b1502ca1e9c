"""Each graph's first checks, asked while the capture still runs.

The capture writes a graph and its inputs when Dynamo hands them over, before Inductor compiles
it: a failing graph and its inputs are there seconds before the script's run of it fails (its
compile is in between), while warm workers would wait for the capture to end. What a failing
graph's confirmation asks first (its replays at Inductor, and the graph at each stage before
Inductor) does not depend on how the script's run of it ends, so it is asked as soon as the
graph is there; so are the further tries, each a process of its own, that a failure ending its
process (a crash, a device-side assert, a compile error) needs. They are the very questions the
confirmation asks (minifier.search.bugs.confirm), so it takes their answers, or waits for them.

When the capture ends, the search takes each graph it looks at from here (module, inputs,
recorded values and evaluator); the checks of the graphs it does not look at are dropped, those
not yet started cancelled. Only where there are cores to spare beside the script's own compile
(`wanted`), and for graphs whose inputs are small enough to be held twice beside its run.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import torch.fx as fx

from compiler.capture_record import CapturedGraph, read
from compiler.stages import STAGES
from minifier.graph.edit import op_nodes
from minifier.localize.pieces import MIN_OPS
from minifier.workers.ask import Question, repeats_question, tries_questions
from minifier.workers.evaluate import Evaluator

EARLY_MAX_BYTES = 256 << 20  # inputs.pt larger than this: asked after the capture, as before
POLL_SECONDS = 0.05


@dataclass
class GraphState:
    """A captured graph ready for the search: its module, real inputs, recorded values and the
    evaluator its first checks went to (`injections`: the bugs planted when it was made)."""
    gm: fx.GraphModule
    inputs: list
    values: dict
    ev: Evaluator
    injections: list
    stamp: tuple = ()  # its files' modification times when loaded (`_stamp`)


def wanted(choice: bool | None, cores: int, gpu: bool = False) -> bool:
    """Early checks on (`choice`, or where none was made, on 4 cores or more: on 2 a worker's
    compile would slow the capture's own). Off by default on a GPU: a graph's replay there could
    device-assert beside the script's own run of it (docs/gpu-safety.md)."""
    return choice if choice is not None else cores >= 4 and not gpu


def first_questions(gm: fx.GraphModule, tries: int) -> list[Question]:
    """What confirming any failure of `gm` asks first, in the order workers take them: its
    replay, its further tries, each in a process of its own (asked where the first replay ends
    its process: a crash, a device-side assert, a compile error; where it ran every try itself,
    as an accuracy bug's does, they are two compiles spent), then each stage before Inductor
    (short checks, wanted only once the bug is confirmed). Stage checks first would leave a
    device assert's last try to a worker still starting, and the confirmation waiting for it.
    Nothing for a graph large enough to be searched in pieces (minifier.localize.pieces), whose
    first questions are about the pieces."""
    if len(op_nodes(gm)) >= MIN_OPS:
        return []
    return [repeats_question(gm, tries)] + tries_questions(gm, 1, tries) \
        + [Question(gm, stage) for stage in STAGES if stage != "inductor"]


class EarlyChecks:
    """Watches the capture's folder on a thread; `prepare(index, folder, record)` loads a graph
    whose inputs are saved (None to leave it), and its first questions are sent at once."""

    def __init__(self, folder: Path, prepare: Callable[[int, Path, dict], GraphState | None], tries: int):
        self.folder, self.prepare, self.tries = folder, prepare, tries
        self.graphs: dict[int, GraphState] = {}
        self.seen: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True, name="early-checks")
        self._thread.start()

    def stop(self, searched: set[int]) -> None:
        """Stop watching (the capture ended); drop the checks of graphs not in `searched`."""
        self._stop.set()
        self._thread.join()
        for index in set(self.graphs) - searched:
            self.graphs.pop(index).ev.abandon()

    def take(self, index: int, injections: list) -> GraphState | None:
        """Graph `index` as prepared early, if it was, with the same planted bugs, and from the
        same files (Dynamo may restart a frame's analysis after its graph was saved: the graph
        saved next, under the same index, is another)."""
        early = self.graphs.pop(index, None)
        if early is not None and (early.injections != injections
                                  or early.stamp != _stamp(self.folder / f"graph_{index}")):
            early.ev.abandon()  # the search makes its own
            return None
        return early

    def _watch(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            for path in self.folder.glob("graph_*"):
                index = int(path.name.split("_")[1])
                if index not in self.seen and (record := _ready(path)) is not None:
                    self.seen.add(index)
                    if record:
                        self._start(index, path, record)

    def _start(self, index: int, path: Path, record: dict) -> None:
        stamp = _stamp(path)
        try:
            early = self.prepare(index, path, record)
        except Exception:  # not loadable here: the search after the capture says why
            return
        if early is not None:
            early.stamp = stamp
            self.graphs[index] = early
            early.ev.prefetch(first_questions(early.gm, self.tries))


def _stamp(path: Path) -> tuple:
    """When the graph and its inputs were written (nanoseconds; its record is written again later)."""
    try:
        return tuple((path / name).stat().st_mtime_ns for name in ("graph.py", "inputs.pt"))
    except OSError:
        return ()


def _ready(path: Path) -> dict | None:
    """The graph's record once its inputs are saved whole; None while they are not; {} for a
    graph left to the search after the capture (not replayable, or inputs too large)."""
    try:
        record = read(CapturedGraph, path / "record.json")
        if record.unsupported is not None:
            return {}
        if record.requires_grad is None:
            return None
        return record.to_dict() if (path / "inputs.pt").stat().st_size <= EARLY_MAX_BYTES else {}
    except (OSError, ValueError):  # CaptureSchemaError too: an earlier run's, until the capture writes it again
        return None
