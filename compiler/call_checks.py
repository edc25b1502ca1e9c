"""The capture's checks of a compiled graph's calls against eager, on copies of the same inputs,
with the one oracle: the first call of every graph, and under CUDA graphs the next few
(compiler/cudagraphs.py). What they find goes into the graph's record."""
from __future__ import annotations

from pathlib import Path

from compiler import custom_ops, gpu_gate
from compiler.capture_record import CapturedGraph, write_json
from compiler.judging import Judging
from compiler.oracle import judged_check
from compiler.saved_inputs import save_inputs


def check_call(eager_gm, args: list, compiled, record: CapturedGraph, judging: Judging) -> None:
    """Judge `compiled` against eager on `args`: the verdict, any failure, and whether the graph's
    own custom op is defined wrongly (compiler/custom_ops.py) go into `record`."""
    outcome = judged_check(eager_gm, args, compiled, "inductor", judging)
    record.verdict = outcome.__dict__
    if outcome.status == "fail" and outcome.kind not in ("accuracy", "layout"):
        record.failure = {"kind": outcome.kind, "signature": outcome.signature,
                          "message": outcome.message, "when": "run", "rung": outcome.rung}
        gpu_gate.hold_if_poisoned(f"{outcome.signature} {outcome.message}")  # see compiler/gpu_gate.py
    elif outcome.status == "fail":
        record.failure = {"kind": outcome.kind, "signature": outcome.signature, "rung": outcome.rung,
                          "message": outcome.message, "when": "run", "metrics": outcome.metrics}
    record.user_op_faults = (record.failure and custom_ops.definition_faults(eager_gm, args)) or None  # user's op?


def check_later_call(model, before: list, seen, eager_gm, folder: Path, record: CapturedGraph,
                     judging: Judging) -> None:
    """A CUDA graphs call after the first (compiler/cudagraphs.py). A failure keeps this call's inputs and
    how many calls of the compiled graph came before it (the first call's check ran it once more)."""
    check_call(model, before, seen, record, judging)
    if record.failure is not None:
        record.failure["calls_before"] = record.calls
        (folder / "inputs.pt").unlink(missing_ok=True)
        save_inputs(folder, eager_gm, before, record)
        write_json(folder / "record.json", record.to_dict())
