"""Passes reach the evaluator only through the budget. No compiler needed: the pool here
answers every job at once and counts what it was sent."""
from concurrent.futures import Future
from pathlib import Path

import pytest
import torch
import torch.fx as fx

from compiler.stages import CompileSpec
from minifier.reduce.budget import Budget, Guarded
from minifier.workers.evaluate import REPRODUCES, Evaluator


class AnsweringPool:
    """Answers each job with `answer`; keeps the jobs it was sent."""

    size, timeout = 1, 600.0

    def __init__(self, answer: dict):
        self.answer, self.sent = answer, []

    def submit(self, job: dict) -> Future:
        self.sent.append(job)
        future = Future()
        future.set_result(dict(self.answer))
        return future


def _graph() -> fx.GraphModule:
    gm = fx.symbolic_trace(lambda x, y: torch.relu(x * y))
    for p in gm.graph.nodes:
        if p.op == "placeholder":
            p.meta["value"] = p.name
    return gm


def _evaluator(answer: dict) -> Evaluator:
    return Evaluator(AnsweringPool(answer), Path("/nowhere"), CompileSpec(), [], signature="accuracy@inductor")


FAILS = {"status": "fail", "kind": "accuracy", "signature": "accuracy@inductor", "seconds": 0.5}


def test_passes_reach_the_evaluator_only_through_guarded_methods():
    ev, gm = _evaluator(FAILS), _graph()
    guard = Guarded(ev, Budget(max_compiles=5), lambda g: (len(g.graph.nodes),), gm)
    assert guard.test(gm) == REPRODUCES and guard.budget.spent == 1
    for name in ("signature", "repeats", "prefetch", "pool"):  # would spend or leak compiles unbudgeted
        with pytest.raises(AttributeError, match="Guarded"):
            getattr(guard, name)
