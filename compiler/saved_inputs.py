"""A captured graph's real inputs, saved before the call that could crash (compiler.capture).

Saved as the replay feeds them: attributes the graph reads lifted to trailing inputs, symbolic
sizes as the numbers of this call, each tensor an exact copy (compiler.tensor_kinds)."""
from __future__ import annotations

import os
from pathlib import Path

import torch

from compiler.capture_record import CapturedGraph
from compiler.graph_code import lift_attributes
from compiler.oracle import clone_inputs
from compiler.tensor_kinds import savable


def save_inputs(folder: Path, gm, inputs: list, record: CapturedGraph) -> None:
    """inputs.pt, once, and `record.requires_grad`; where they cannot be saved, `record.unsupported` says why."""
    if (folder / "inputs.pt").exists() or record.unsupported is not None:
        return
    try:
        if any(getattr(x, "fake_mode", None) is not None for x in inputs):
            raise ValueError("only fake example inputs are available")
        _, lifted = lift_attributes(gm, clone_inputs([_concrete(x) for x in inputs]))
        torch.save(savable(lifted), folder / "inputs.tmp")
        os.replace(folder / "inputs.tmp", folder / "inputs.pt")  # whole or absent, for a reader meanwhile
        record.requires_grad = [bool(getattr(x, "requires_grad", False)) for x in lifted]
    except Exception as exc:
        record.unsupported = f"inputs not saved: {type(exc).__name__}: {exc}"


def symbolic_inputs(gm: torch.fx.GraphModule) -> bool:
    """Whether Dynamo traced the graph with symbolic sizes (dynamic=True, mark_dynamic, or a
    recompile after a new shape): a replay with the plain numbers of one call compiles it static."""
    for p in gm.graph.find_nodes(op="placeholder"):
        value = p.meta.get("example_value")
        if isinstance(value, torch.SymInt) or (
                isinstance(value, torch.Tensor) and any(isinstance(s, torch.SymInt) for s in value.shape)):
            return True
    return False


def _concrete(x):
    """A symbolic size (what Dynamo hands a backend at compile time under dynamic shapes) as
    the value it stands for in this call; replays and repros pass plain numbers."""
    if isinstance(x, (torch.SymInt, torch.SymFloat, torch.SymBool)):
        hint = getattr(x.node, "hint", None)
        if hint is None:
            raise ValueError(f"a data-dependent size {x} has no value at compile time")
        return hint
    return x
