"""Compiler settings that explain a numerics difference, each verified before it is named.

Inductor's `emulate_precision_casts` keeps eager's fp16/bf16 rounding between fused ops, and
Triton's fp32 upcast can be turned off; a setting is reported only when a worker saw the
graph's compiled outputs equal eager's bit for bit under it, on the graph's recorded inputs.
"""
from __future__ import annotations

from pathlib import Path

import torch

from compiler.context import graph_modes
from compiler.stages import CompileSetup, CompileSpec
from compiler.subsystems import config_defaults
from minifier.capture.values import load_graph, record_values
from minifier.workers.answer import Answer
from minifier.workers.ask import Asker

# Settings that trade Inductor's numerics for eager's: {config key: value to try, devices}.
HINTS = {
    "emulate_precision_casts": (True, ("cpu", "cuda", "xpu")),
    "triton.codegen_upcast_to_fp32": (False, ("cuda", "xpu")),
}


def tf32_hint(record) -> list[dict]:
    """The script ran the graph on CUDA with TF32 allowed (cuDNN allows it by default): the oracle
    judges with TF32 off, and there the graph passed, so TF32 rounding is a likely cause. Said as
    what was seen, not as a verified setting."""
    tf32 = (record.record.get("context") or {}).get("tf32") or {}
    on = [f"torch.backends.{name}.allow_tf32" for name, key in (("cudnn", "cudnn"), ("cuda.matmul", "matmul"))
          if tf32.get(key)]
    if not on:
        return []
    return [{"config": "tf32", "value": False,
             "text": f"the script runs with {' and '.join(on)} = True (cuDNN's is PyTorch's default); the oracle "
                     f"judges with TF32 off, and there graph {record.index} passes: TF32 rounding in a kernel "
                     f"picked for compiled's layout is a likely cause; set it to False to compare in full fp32"}]


def verified_hints(record, pool, work: Path, say=lambda text: None) -> list[dict]:
    """The settings of HINTS under which the graph's compiled outputs equal eager's bit for bit,
    each checked on the graph's recorded inputs by a worker; then the TF32 hint (tf32_hint)."""
    return _verified_config_hints(record, pool, work, say) + tf32_hint(record)


def _verified_config_hints(record, pool, work: Path, say) -> list[dict]:
    gm, inputs = load_graph(record)
    spec, context = CompileSpec.from_dict(record.record["spec"]), record.record.get("context") or {}
    device = next((x.device.type for x in inputs if isinstance(x, torch.Tensor)), "cpu")
    defaults = config_defaults()
    tries = {key: value for key, (value, devices) in HINTS.items()
             if device in devices and key in defaults and spec.config.get(key, defaults[key]) != value}
    if not tries:
        return []
    case_dir = work / "cases" / f"numerics_{record.index}"
    case_dir.mkdir(parents=True, exist_ok=True)
    with graph_modes(context, spec.grad_enabled, inputs, only_autocast=True):
        torch.save(record_values(gm, inputs), case_dir / "values.pt")
    hints = []
    for key, value in tries.items():
        say(f"graph {record.index}: does {key} = {value!r} make compiled match eager?")
        tried = CompileSpec.from_dict({**spec.to_dict(), "config": {**spec.config, key: value}})
        ev = Asker(pool, case_dir, CompileSetup(tried, record.record.get("injections") or [], context))
        answer = Answer.from_wire(ev.outcomes([gm])[0])
        if answer.status == "pass" and not answer.kind:
            hints.append({"config": key, "value": value,
                          "text": f"with torch._inductor.config.{key} = {value!r} the compiled result matches eager "
                                  f"bit for bit (verified on graph {record.index}'s inputs)"})
    return hints
