"""A worker's answer to one Job, as one type.

On the wire (and in the evaluator's cache and checkpoints) an answer is a dict: the oracle's
Outcome (status, kind, signature, message, rung, metrics, reference), with what the worker and
the pool add (runs, kernels, compiles, wall, seeded, ...). `Answer.from_wire` reads the fields
that decide a verdict and what it cost once, by name; everything else stays in `extra`.
Standard library only, like minifier.workers.job.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# Answers that compiled nothing: the graph failed eagerly, the worker could not run it, or the
# question was about randomness (answered without a compile of its own).
NO_COMPILE_KINDS = frozenset({"eager_error", "nondeterministic", "worker_error"})


@dataclass(frozen=True)
class Answer:
    status: str | None  # pass | fail | invalid (checks); ok (divergence, kernels)
    kind: str | None = None  # accuracy, compile_error, crash, hang, ... (None: a plain pass)
    signature: str | None = None  # a failure's signature (compiler.signature)
    message: str | None = None
    compiles: int | None = None  # compiles the job spent (None: one; a kernels job: 0; a divergence job: several)
    seconds: float | None = None  # the worker's time for the job
    wall: float | None = None  # the pool's time for it, waiting for a worker excluded
    extra: dict = field(default_factory=dict)  # every other field of the wire form

    @property
    def failed(self) -> bool:
        return self.status == "fail"

    @property
    def compiles_spent(self) -> int:
        """The compiles this answer counts: none for a failure before any compile."""
        if self.kind in NO_COMPILE_KINDS:
            return 0
        return 1 if self.compiles is None else self.compiles

    @property
    def duration(self) -> float:
        """How long the job took: the pool's wall time, else the worker's own."""
        return float(self.wall or self.seconds or 0.0)

    @property
    def hung(self) -> bool:
        return self.kind == "hang"

    @property
    def rung(self) -> str | None:
        """The oracle's rung that failed (compiler.rungs; "exception" for errors), if one did."""
        return self.extra.get("rung")

    @property
    def metrics(self) -> list[dict]:
        """The oracle's metrics, one per output (compiler.ladder.compare_tensor); none if not judged."""
        return self.extra.get("metrics") or []

    @property
    def kernels(self) -> list[dict] | None:
        """The kernels Inductor built (a divergence or kernels job, a check asked for its kernel map)."""
        return self.extra.get("kernels")

    @property
    def kernel_nodes(self) -> list[str]:
        """Nodes of the kernel a device-side assert came from (compiler.device_asserts); empty if none."""
        return self.extra.get("kernel_nodes") or []

    @property
    def died_in_kernel(self) -> str | None:
        """The C++ or Triton kernel a worker was running when it crashed or was killed as hung,
        where its marks file or fault handler's stacks name one (compiler.crash_trace)."""
        return self.extra.get("died_in_kernel")

    @property
    def seeded(self) -> bool:
        """Judged with every run re-seeded (a graph drawing random numbers as eager does)."""
        return bool(self.extra.get("seeded"))

    @property
    def runs(self) -> list[dict]:
        """Each run's own fields, for a job of several runs (Job.runs); one empty entry otherwise."""
        return self.extra.get("runs") or [{}]

    @staticmethod
    def from_wire(wire: dict) -> Answer:
        named = {"status", "kind", "signature", "message", "compiles", "seconds", "wall"}
        return Answer(wire.get("status"), wire.get("kind"), wire.get("signature"), wire.get("message"),
                      wire.get("compiles"), wire.get("seconds"), wire.get("wall"),
                      {k: v for k, v in wire.items() if k not in named})

    def to_wire(self) -> dict:
        """The dict form: the named fields (unset ones left out) and `extra`."""
        named = {"status": self.status, "kind": self.kind, "signature": self.signature, "message": self.message,
                 "compiles": self.compiles, "seconds": self.seconds, "wall": self.wall}
        return {**{k: v for k, v in named.items() if v is not None}, **self.extra}
