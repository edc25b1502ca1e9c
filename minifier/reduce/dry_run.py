"""A CUDA candidate that indexes by its values, run eagerly on the CPU in the parent first.

On CUDA an index out of range (a shrunk embedding table that the recorded indices overrun, a
class target past the class count) is a device-side assert: the worker's CUDA context is dead
and the worker is started again, seconds on a GPU machine, for a candidate that was never a
program. Fake tensors cannot see it: it depends on the values. The same eager run on CPU copies
raises an ordinary IndexError in milliseconds, so such a candidate is answered `invalid`
without reaching a worker (minifier.reduce.validate.validator).

Only graphs with an op that reads memory at positions taken from a tensor's values, with CUDA
inputs of at most MAX_BYTES in all, are run; elsewhere the worker's own eager run is as cheap.
Only an index error counts: any other CPU failure (a device hard-coded in the graph, an op the
CPU lacks) says nothing of the candidate, which then runs as before.
"""
from __future__ import annotations

import operator
import re

import torch
import torch.fx as fx

from minifier.graph.edit import op_label, placeholders
from minifier.graph.input_transforms import apply_transform

INDEXING = ("embedding", "index", "gather", "scatter", "take", "nll_loss", "cross_entropy", "one_hot", "bincount")
MAX_BYTES = 64 << 20
INDEX_ERROR = re.compile(r"out of (range|bounds)|must be (smaller|less) than|index .* is out|Target -?\d+ is out")


def indexes_by_value(gm: fx.GraphModule) -> bool:
    """Does an op of `gm` read at positions held in a tensor (embedding, gather, x[idx], ...)?"""
    for node in gm.graph.nodes:
        if node.op not in ("call_function", "call_method", "call_module"):
            continue
        if node.target is operator.getitem:
            index = node.args[1] if len(node.args) > 1 else None
            if isinstance(index, fx.Node) or (isinstance(index, (tuple, list)) and any(isinstance(i, fx.Node) for i in index)):
                if isinstance(node.args[0], fx.Node) and not isinstance(node.args[0].meta.get("val"), tuple):
                    return True
            continue
        if any(word in op_label(node) for word in INDEXING):
            return True
    return False


def cpu_inputs(gm: fx.GraphModule, values: dict, copies: dict, devices: tuple = ("cuda",)) -> list | None:
    """The candidate's inputs on the CPU, transforms applied (recorded values copied once into
    `copies`); None unless they are tensors on `devices` of at most MAX_BYTES in all."""
    args, total = [], 0
    for p in placeholders(gm):
        name = p.meta.get("value", p.name)
        value = values[name]
        if isinstance(value, torch.Tensor):
            if value.device.type not in devices:
                return None
            total += value.numel() * value.element_size()
            if total > MAX_BYTES:
                return None
            if name not in copies:
                copies[name] = value.detach().cpu()
            value = apply_transform(copies[name], p.meta.get("transform"))
        args.append(value)
    return args


def why_index_fails(gm: fx.GraphModule, values: dict, copies: dict, devices: tuple = ("cuda",)) -> str | None:
    """One line when `gm`'s eager run on CPU copies of its inputs (tensors on `devices`) raises
    an index error."""
    args = cpu_inputs(gm, values, copies, devices)
    if args is None:
        return None
    try:
        with torch.no_grad():
            gm(*args)
    except Exception as exc:
        text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        if isinstance(exc, IndexError) or INDEX_ERROR.search(text):
            return f"an index out of range (eager on the CPU: {type(exc).__name__}: {text})"[:300]
    return None
