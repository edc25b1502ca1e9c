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

import torch.fx as fx

from compiler.graph_code import module_source
from compiler.stages import CompileSpec
from minifier.graph_edit import placeholders
from minifier.workers import WorkerPool

REPRODUCES, PASSES, INVALID = "reproduces", "passes", "invalid"
NO_COMPILE_KINDS = {"eager_error", "nondeterministic", "worker_error"}


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
    compiles: int = 0
    cache_hits: int = 0
    cache: dict = field(default_factory=dict)
    log: list = field(default_factory=list)

    def job(self, gm: fx.GraphModule, stage: str | None = None) -> dict:
        return {"op": "check", "case_dir": str(self.case_dir), "source": module_source(gm),
                "inputs": [p.meta.get("value", p.name) for p in placeholders(gm)],
                "stage": stage or self.stage, "spec": self.spec.to_dict(), "injections": self.injections,
                "atol": self.atol, "rtol": self.rtol}

    def outcomes(self, gms: list[fx.GraphModule], stage: str | None = None) -> list[dict]:
        """Check candidates on as many workers as there are, answers in the given order."""
        jobs = [self.job(gm, stage) for gm in gms]
        keys = [_key(job) for job in jobs]
        pending = {}
        for key, job in zip(keys, jobs):
            if key in self.cache:
                self.cache_hits += 1
            elif key not in pending:
                pending[key] = self.pool.submit(job)
        for key, future in pending.items():
            answer = future.result()
            if answer.get("kind") not in NO_COMPILE_KINDS:
                self.compiles += 1
            self.cache[key] = answer
            self.log.append({"key": key, "status": answer.get("status"), "kind": answer.get("kind"),
                             "seconds": round(answer.get("seconds", 0.0), 3)})
        return [self.cache[key] for key in keys]

    def verdict(self, answer: dict) -> str:
        if answer.get("status") == "fail":
            return REPRODUCES if answer.get("signature") == self.signature else PASSES
        return INVALID if answer.get("status") == "invalid" else PASSES

    def test(self, gm: fx.GraphModule) -> str:
        return self.verdict(self.outcomes([gm])[0])

    def test_many(self, gms: list[fx.GraphModule]) -> list[str]:
        return [self.verdict(a) for a in self.outcomes(gms)]


def _key(job: dict) -> str:
    blob = json.dumps({k: job[k] for k in ("source", "inputs", "stage", "spec", "injections", "atol", "rtol")},
                      sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()
