"""The first outputs of each torch.compile'd callable, saved for the end-to-end check.

A program can fail although every compiled graph matches eager on its own inputs (errors
that only add up across graphs, or state between them). The evidence is the outputs of the
functions the script compiled: the capture saves the outputs of each one's first call, in a
compiled run and in a run with nothing compiled, and the parent compares the two. Both runs
start the script from scratch, so no run can disturb the other's state.
"""
from __future__ import annotations

import functools
from pathlib import Path

import torch

from compiler.oracle import flatten


def save_outputs(path: Path, out) -> None:
    """Tensors (detached, on the CPU) and plain values by their path in the output structure."""
    leaves = {}
    for name, value in flatten(out):
        if isinstance(value, torch.Tensor):
            leaves[name] = value.detach().cpu().clone()
        elif value is None or isinstance(value, (bool, int, float, str)):
            leaves[name] = value
        else:
            leaves[name] = f"<{type(value).__name__}>"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    torch.save(leaves, tmp)
    tmp.replace(path)


def record_first_call(handle, path: Path):
    """`handle` (what torch.compile returned) saving the outputs of its first call to `path`."""
    calls = 0

    def around(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            nonlocal calls
            calls += 1
            out = fn(*args, **kwargs)
            if calls == 1:
                save_outputs(path, out)
            return out

        return call

    if isinstance(handle, torch.nn.Module):
        handle.forward = around(handle.forward)  # the compiled module's own forward, per instance
        return handle
    return around(handle)
