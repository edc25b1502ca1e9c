"""The capture's side of graphs holding functional collectives (compiler/collectives.py).

At the first call the eager run of the check (or, where the compile failed, the program's own
eager call) goes through a Recorder: the same collectives, in the same order, on every rank,
so no peer is kept waiting. Once it has run, before the compiled graph runs (it may crash),
the graph is written again without its collectives and its inputs with each one's recorded
value, the original kept beside. Where the compiled graph failed, the rewritten graph is
compiled and checked once more on this process: if it passes, the collective itself is the
bug (`collective_bug`), and one process cannot show it.
"""
from __future__ import annotations

import os
import traceback
from pathlib import Path

import torch

from compiler.capture_record import CapturedGraph, write_json
from compiler.collectives import Recorder, has_collectives, peers_value, without_collectives
from compiler.saved_inputs import save_inputs

ORIGINAL_GRAPH = "graph_collective.py"
ORIGINAL_INPUTS = "collective_inputs.pt"
COLLECTIVE_VALUES = "collective_values.pt"


class RecordingModel:
    """`eager_gm` whose first run keeps its collectives' values and rewrites the graph's files."""

    def __init__(self, eager_gm: torch.fx.GraphModule, folder: Path, record: CapturedGraph, write_graph):
        self.eager_gm, self.folder, self.record, self.write_graph = eager_gm, folder, record, write_graph
        self.args: list | None = None  # the call's own inputs, set by `first_call`
        self.rewritten, self.peers = None, []

    def first_call(self, args: list) -> None:
        self.args = list(args)

    def __call__(self, *args):
        if self.args is None or self.rewritten is not None or self.record.collectives is not None:
            return self.eager_gm(*args)
        recorder = Recorder(self.eager_gm)
        out = recorder.run(*args)
        if self.record.unsupported is not None:  # no graph.py to rewrite (a compiled autograd backward, ...)
            self.record.collectives = {"error": f"not rewritten: {self.record.unsupported}"[:300]}
            return out
        try:
            self._rewrite(recorder.seen)
        except Exception as exc:  # the graph stays as it was: not replayable on one process
            self.record.collectives = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        return out

    def _rewrite(self, seen: dict) -> None:
        folder = self.folder
        gm, waits = without_collectives(self.eager_gm, seen)
        peers = [peers_value(seen[w]) for w in waits]
        os.replace(folder / "graph.py", folder / ORIGINAL_GRAPH)
        if (folder / "inputs.pt").exists():
            os.replace(folder / "inputs.pt", folder / ORIGINAL_INPUTS)
        self.write_graph(folder, gm)
        self.record.requires_grad = None
        save_inputs(folder, gm, self.args + peers, self.record)
        self.record.collectives = [{"wait": w, "op": seen[w]["op"], "args": seen[w]["args"]} for w in waits]
        torch.save({w: {"input": seen[w]["input"], "result": seen[w]["result"]} for w in waits},
                   folder / COLLECTIVE_VALUES)  # each one's own input and result on this rank: the 2-rank repro's
        self.rewritten, self.peers = gm, peers
        # now: where the compile failed, the capture wrote it before this call
        write_json(folder / "record.json", self.record.to_dict())


def recording(eager_gm, folder: Path, record: CapturedGraph, write_graph):
    """What the first call's eager runs go through: `eager_gm` itself where it holds no collective."""
    return RecordingModel(eager_gm, folder, record, write_graph) if has_collectives(eager_gm) else eager_gm


def recheck_alone(model, check) -> None:
    """Where the compiled graph failed, the rewritten one compiled and checked on this process
    (`check(gm, args, compiled)` writes no record): passing, the collective itself is the bug."""
    if not isinstance(model, RecordingModel) or model.rewritten is None or model.record.failure is None:
        return
    from torch._inductor.compile_fx import compile_fx

    gm = model.rewritten
    args = model.args + model.peers
    try:
        outcome = check(gm, args, compile_fx(gm, args))
        model.record.collective_bug = outcome.status == "pass"
        model.record.alone_verdict = outcome.__dict__
    except Exception:
        model.record.alone_verdict = {"status": "error", "message": traceback.format_exc()[-1000:]}

