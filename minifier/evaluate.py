"""Is this candidate still the same bug? Three answers, a cache, and a compile count.

Every question about a candidate graph goes through `Evaluator.test`: the candidate becomes
module source plus references to recorded inputs, a warm worker checks it with the one
oracle, and the answer is `reproduces` (same signature as the original failure), `passes`
or `invalid`. Answers are cached by (source, inputs, stage), so nothing is compiled twice.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import torch.fx as fx

from compiler.graph_code import module_source
from compiler.stages import CompileSpec
from minifier.graph_edit import input_ref, op_names, placeholders
from minifier.workers import WorkerPool

REPRODUCES, PASSES, INVALID = "reproduces", "passes", "invalid"
NO_COMPILE_KINDS = {"eager_error", "nondeterministic", "worker_error"}
MIN_ADAPTIVE_TIMEOUT = 60.0


@dataclass
class Evaluator:
    pool: WorkerPool
    case_dir: Path
    spec: CompileSpec
    injections: list[dict]
    signature: str
    stage: str = "inductor"
    atol: float | None = None
    rtol: float | None = None
    strict: bool = False
    culprit: str | None = None  # accuracy: the node where values first diverge must stay in the graph
    timeout: float | None = None  # per candidate; a candidate running longer is a hang
    validate: Callable[[fx.GraphModule], str | None] | None = None  # why a candidate cannot run, checked
    rejected: int = 0  # candidates `validate` answered invalid: never sent to a worker, never compiled
    compiles: int = 0
    cache_hits: int = 0
    slowest: float = 0.0  # seconds of the slowest answer that was not a hang
    cache: dict = field(default_factory=dict)
    log: list = field(default_factory=list)

    def job(self, gm: fx.GraphModule, stage: str | None = None) -> dict:
        return {"op": "check", "case_dir": str(self.case_dir), "source": module_source(gm),
                "inputs": [input_ref(p) for p in placeholders(gm)],
                "stage": stage or self.stage, "spec": self.spec.to_dict(), "injections": self.injections,
                "atol": self.atol, "rtol": self.rtol, "strict": self.strict,
                **({"timeout": self.timeout or self.adaptive_timeout()} if self.timeout or self.slowest else {})}

    def adaptive_timeout(self) -> float:
        """Candidates are smaller than the graph first checked, so one that runs 10x longer than
        the slowest answer so far (at least a minute) is stuck: a C++ `throw` inside an OpenMP
        loop can deadlock ("terminate called recursively") instead of aborting. Without this
        each such candidate would hold a worker for the pool's full timeout."""
        return min(self.pool.timeout, max(MIN_ADAPTIVE_TIMEOUT, 10 * self.slowest))

    def outcomes(self, gms: list[fx.GraphModule], stage: str | None = None, repeat: int = 0) -> list[dict]:
        """Check candidates on as many workers as there are, answers in the given order.
        `repeat` > 0 asks again instead of answering from the cache (flakiness checks)."""
        return self._answers([(gm, stage) for gm in gms], repeat)

    def outcomes_at(self, gm: fx.GraphModule, stages: list[str]) -> list[dict]:
        """One graph through several stages at once (the stage search), answers in order."""
        return self._answers([(gm, stage) for stage in stages])

    def _answers(self, pairs: list[tuple], repeat: int = 0) -> list[dict]:
        jobs = [{**self.job(gm, stage), "repeat": repeat} for gm, stage in pairs]
        keys = [_key(job) for job in jobs]
        pending = {}
        for key, job, (gm, _) in zip(keys, jobs, pairs):
            if key in self.cache:
                self.cache_hits += 1
            elif key not in pending:
                why = self.validate(gm) if self.validate is not None else None
                if why:
                    self.rejected += 1
                    self.cache[key] = {"status": "invalid", "kind": "invalid_graph", "message": why}
                else:
                    pending[key] = self.pool.submit(job)
        for key, future in pending.items():
            answer = future.result()
            if answer.get("kind") not in NO_COMPILE_KINDS:
                self.compiles += 1
            self.cache[key] = answer
            if answer.get("kind") != "hang":
                self.slowest = max(self.slowest, float(answer.get("wall") or answer.get("seconds") or 0.0))
            self.log.append({"key": key, "status": answer.get("status"), "kind": answer.get("kind"),
                             "seconds": round(answer.get("seconds", 0.0), 3)})
        return [self.cache[key] for key in keys]

    def repeats(self, gm: fx.GraphModule, times: int) -> list[dict]:
        """`times` independent checks of one graph (in parallel), for the k-of-k flakiness rule."""
        futures = [self.pool.submit({**self.job(gm), "repeat": r}) for r in range(1, times)]
        answers = [self.outcomes([gm])[0]]
        for future in futures:
            answers.append(future.result())
            if answers[-1].get("kind") not in NO_COMPILE_KINDS:
                self.compiles += 1
        return answers

    def verdict(self, answer: dict, gm: fx.GraphModule | None = None) -> str:
        """Same signature, and for accuracy the same first divergent node, or it is another bug."""
        if answer.get("status") == "fail":
            if answer.get("signature") != self.signature:
                return PASSES
            if self.culprit and gm is not None and self.culprit not in op_names(gm):
                return PASSES
            return REPRODUCES
        return INVALID if answer.get("status") == "invalid" else PASSES

    def test(self, gm: fx.GraphModule) -> str:
        return self.verdict(self.outcomes([gm])[0], gm)

    def test_many(self, gms: list[fx.GraphModule]) -> list[str]:
        return [self.verdict(a, gm) for a, gm in zip(self.outcomes(gms), gms)]


def _key(job: dict) -> str:
    blob = json.dumps({k: job[k] for k in ("source", "inputs", "stage", "spec", "injections", "atol", "rtol", "strict", "repeat")},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
