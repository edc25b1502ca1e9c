"""The rung below Inductor for a graph compiled with CUDA graphs: the same compile without them
(compiler/cudagraphs.py). Where that passes, the failure is CUDA graphs' (their recording or
replay), not Inductor's code."""
from __future__ import annotations

from dataclasses import replace

import torch
import torch.fx as fx

from compiler.cudagraphs import uses_cudagraphs, without_cudagraphs
from minifier.workers.answer import Answer
from minifier.workers.evaluate import Evaluator


def cudagraphs_rung(ev: Evaluator, gm: fx.GraphModule, values: dict) -> dict:
    """The rung below Inductor with CUDA graphs: the same compile without them (compiler/cudagraphs.py)."""
    on_gpu = any(isinstance(v, torch.Tensor) and v.is_cuda for v in values.values())
    if ev.stage != "inductor" or not uses_cudagraphs(ev.setup.spec) or not (on_gpu or ev.setup.calls_before):
        return {}  # CUDA graphs run only on the GPU: a CPU graph compiled with reduce-overhead never used them
    plain = replace(ev, setup=replace(ev.setup, spec=without_cudagraphs(ev.setup.spec)))
    answer = Answer.from_wire(plain.outcomes([gm])[0])
    if answer.failed:
        return {"cudagraphs": "fails with CUDA graphs off too: Inductor's, not CUDA graphs'"}
    calls = ev.setup.calls_before
    return {"cudagraphs": f"fails only with CUDA graphs: the same compile without them passes"
                          f"{f'; it shows at call {calls + 1} of the compiled graph, not before' if calls else ''}"}
