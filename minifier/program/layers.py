"""Which layer of torch.compile a program-level failure belongs to: the program-level stage ladder.

When no captured graph fails on its own, or the failure happens before any graph reaches a
backend, the whole program is run again with every torch.compile'd callable compiled by a
backend that stops earlier in the stack: `eager` (Dynamo alone), `aot_eager` (Dynamo and
AOTAutograd), `aot_eager_decomp_partition` (with decompositions and the partitioner). The
first backend under which the program shows the same failure names the layer to blame; if
none does, only the script's own backend (the compiler, e.g. Inductor) shows it. An exception
raised inside torch._dynamo while tracing is Dynamo's whatever the backend.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from compiler.judging import Judging
from compiler.launch_form import Launch
from minifier.capture.process import Capture, CaptureOptions, start_capture
from minifier.program.interaction import EndToEnd, same_failure

LADDER = (("eager", "Dynamo"), ("aot_eager", "AOTAutograd"),
          ("aot_eager_decomp_partition", "decompositions and partitioner"))
COMPILER = "the compiler (the script's own backend)"
# Raised by Dynamo itself while tracing (BackendCompilerFailed is the backend's, not Dynamo's).
DYNAMO_ERRORS = ("InternalTorchDynamoError", "TorchRuntimeError", "Unsupported")


@dataclass
class Layer:
    name: str  # "Dynamo", "AOTAutograd", ... or COMPILER
    backend: str | None  # the earliest backend that shows the failure; None: only the script's own
    runs: list[dict]  # each rung tried: backend and whether it failed the same way

    def to_dict(self) -> dict:
        return asdict(self)


def raised_in_dynamo(script: dict) -> bool:
    """The script died of an exception Dynamo raised while tracing (before any backend ran).
    Its traceback alone says nothing: every compiled call passes through torch/_dynamo frames."""
    return script.get("status") == "error" and (script.get("type") or "") in DYNAMO_ERRORS


def blame_layer(script: Launch | Path, args: list[str], eager: Capture, wanted: EndToEnd, work: Path, timeout: float,
                injections: list[str] = (), judging: Judging = Judging()) -> Layer:
    """Run the rungs side by side and return the first (in ladder order) that fails like `wanted`."""
    running = [(backend, start_capture(script, args, work / f"layer_{backend}", work / f"layer_{backend}.log",
                                       CaptureOptions(injections=injections, backend=backend)))
               for backend, _ in LADDER]
    runs = []
    for backend, proc in running:
        run = proc.finish(timeout)
        runs.append({"backend": backend, "fails": same_failure(run, eager, wanted, judging),
                     "seconds": round(run.seconds, 2)})
    first = next((i for i, r in enumerate(runs) if r["fails"]), None)
    if first is None:
        return Layer(COMPILER, None, runs)
    return Layer(LADDER[first][1], LADDER[first][0], runs)
