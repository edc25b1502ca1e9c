"""One question for a worker, and its cache key, as one type.

A `Job` says what to run (`op`: check, kernels, divergence) on which graph (its module source
and references to recorded inputs in `case_dir`), how to compile it (stage, spec, injected bugs,
the modes the script ran under) and how to judge it (tolerances, runs). The evaluator and the
fuzzer build one per question; it travels to the worker as `to_dict()` and is decoded there by
`from_dict`. `key()` names what is asked, not how: the timeout and the kernel build threads
are left out, so the same question asked with another limit is answered from the cache.
Standard library only (and compiler.judging): the worker imports it before torch.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, fields

from compiler.judging import Judging

# What every question's key holds; `op` joins it for a question other than a check, and `runs`
# for more than one run (see `Job.key`).
KEY_FIELDS = ("source", "inputs", "stage", "spec", "injections", "atol", "rtol", "strict", "context", "repeat")
# `calls_before` joins the key where it is not 0
# What the compile of a check depends on: the tries that share one (`compile_store`) agree on all of it.
STORE_FIELDS = ("source", "inputs", "stage", "spec", "injections", "context", "backward", "calls_before")
_TUPLES = ("inputs", "injections", "node_names", "known_kernels")  # lists on the wire, tuples in a Job


@dataclass(frozen=True)
class Job:
    source: str  # module source of the graph (compiler.graph_code)
    inputs: tuple  # per placeholder: a recorded value's name, or (name, transform)
    case_dir: str  # where values.pt holds the recorded values
    spec: dict  # CompileSpec.to_dict(): how the script called torch.compile
    stage: str = "inductor"
    op: str = "check"  # check | kernels | divergence
    injections: tuple = ()  # Injection.to_dict() of each planted bug
    judging: Judging = Judging()  # tolerances, strict, rungs turned off; flat on the wire (atol, rtol, ...)
    context: dict = field(default_factory=dict)  # modes the graph ran under (compiler.context)
    repeat: int = 0  # > 0: the same question asked again (flakiness), not taken from the cache
    runs: int = 1  # compiled once, run this many times (the k-of-k rule)
    node_names: tuple | None = None  # divergence: the graph's node names, in order
    timeout: float | None = None  # seconds after which the run is a hang (None: the pool's)
    kernel_threads: int = 1  # threads that build new kernels
    backward: bool = False  # check: floating inputs require grad; their gradients are judged too (compiler.grads)
    kernel_map: bool = False  # check: also answer Inductor's kernels and the nodes each computes
    known_kernels: tuple | None = None  # divergence: that answer of an earlier check of the same graph
    known_metrics: dict | None = None  # divergence: node -> oracle metrics of the outputs that check judged
    judged_outputs: int | None = None  # check: only the first this many outputs decide the verdict (the
    # rest are values Inductor stores anyway, returned for the divergence search to read)
    calls_before: int = 0  # calls of the compiled graph before the judged one (CUDA graphs: compiler/cudagraphs.py)
    kernel_waits: bool = False  # check: each Triton kernel waited for, to name one that asserts (set by the
    # pool once the run has seen a device assert: compiler/device_asserts.py); not in the key
    until_pass: bool = False  # check: no run after one that passes (a piece that passes is looked at no
    # further); not in the key: the answer is the first runs of the same question (Evaluator.repeats)
    share_compile: bool = False  # check: the whole-graph compile kept for, or loaded from, the other tries
    # of this question (`compile_store`); not in the key: it changes how long, not what is answered

    def __post_init__(self) -> None:
        for name in _TUPLES:
            value = getattr(self, name)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    def key(self) -> str:
        """The cache key: a hash of what is asked (KEY_FIELDS, with `op`, `runs`, `ignore`,
        `backward` and `judged_outputs` where they differ from a single forward check with the
        whole ladder)."""
        names = KEY_FIELDS + (("op",) if self.op != "check" else ()) + (("runs",) if self.runs > 1 else ()) \
            + (("ignore",) if self.judging.ignore else ()) + (("backward",) if self.backward else ()) \
            + (("judged_outputs",) if self.judged_outputs else ()) + (("calls_before",) if self.calls_before else ())
        return self._digest(names)

    def compile_store(self) -> str | None:
        """Where the tries of this question keep the compile they share (compiler.shared_compile):
        a folder per graph, inputs, stage and setup, under the case's own; None unless `share_compile`."""
        if not self.share_compile:
            return None
        return os.path.join(self.case_dir, "compiles", self._digest(STORE_FIELDS)[:16])

    def _digest(self, names: tuple[str, ...]) -> str:
        """A hash of the wire fields `names`: what the key or the compile store is made of."""
        wire = self.to_dict()
        blob = json.dumps({k: wire.get(k) for k in names}, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()

    def to_dict(self) -> dict:
        """The job as sent to a worker: plain lists and dicts, unset (None) fields left out; the
        judging's fields sit beside the others (the keys of saved answers name them so)."""
        wire = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "judging"}
        wire = {**wire, **self.judging.to_dict()}
        return {k: list(v) if k in _TUPLES and v is not None else v for k, v in wire.items() if v is not None}

    @staticmethod
    def from_dict(wire: dict) -> "Job":
        own = {f.name: wire[f.name] for f in fields(Job) if f.name in wire and f.name != "judging"}
        return Job(**own, judging=Judging.from_dict(wire))
