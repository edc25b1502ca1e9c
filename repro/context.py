"""The global modes a graph ran under, as repro.py's CONTEXT records them.

Grad mode is already part of CompileSpec; this adds what else changes what a compiled graph
computes: inference mode, autocast (and its dtype) and deterministic algorithms. Call it
where the graph is compiled or first run (the capture's backend) and pass the result as
ReproInfo.context; repro/runner.py re-enters the same modes around the check.
"""
from __future__ import annotations

import torch


def current_context(device_type: str = "cpu") -> dict:
    """Only the modes that are on (an empty dict means: plain eager defaults)."""
    context: dict = {}
    if torch.is_inference_mode_enabled():
        context["inference_mode"] = True
    if torch.is_autocast_enabled(device_type):
        context["autocast"] = {"dtype": str(torch.get_autocast_dtype(device_type)).replace("torch.", "")}
    if torch.are_deterministic_algorithms_enabled():
        context["deterministic"] = True
    return context
