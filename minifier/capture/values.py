"""A captured graph as a module with its real inputs, and every value it computes on them.

What every later stage starts from: the search reduces the graph against these values, the
numerics check replays it, and workers feed candidates from them.
"""
from __future__ import annotations

import operator
from pathlib import Path

import torch
import torch.fx as fx

from compiler.graph_code import module_from_source, placeholders, trace_module
from compiler.oracle import clone_inputs
from compiler.tensor_kinds import copy_tensor, is_zero_tensor
from minifier.capture.process import GraphRecord
from minifier.graph.edit import op_label
from repro.inputs import load_inputs
from repro.value_store import MAIN, SHARD, memory_budget, nbytes, save_atomically, spill


def load_graph(record: GraphRecord) -> tuple[fx.GraphModule, list]:
    source = (record.folder / "graph.py").read_text()
    gm = trace_module(module_from_source(source))
    inputs = load_inputs(record.folder / "inputs.pt")
    for p in placeholders(gm):
        p.target = p.name  # `def forward(self, x)` rather than `def forward(self, L_x_): x = L_x_`
        p.meta["value"] = p.name
    return gm, inputs


def record_values(gm: fx.GraphModule, inputs: list, folder: Path | None = None) -> dict:
    """Every value the graph computes on its real inputs, by node name (eager, fp as-is). With
    `folder`, they are saved there as a case's values (repro.value_store): whenever those not yet
    saved pass the memory budget they go to a shard and are kept memory-mapped, so a deep model's
    activations are never all in memory at once.

    A graph that writes in place (`x[:, 2:5] = 2`, `index_put_`, `copy_` into a slice) runs on
    copies of `inputs`, which stay as loaded, and each value is kept as it was when computed: a
    view of an input read before the write must not show it. A value viewing the storage of an
    earlier one as another dtype (`x.view(torch.int32)`) is copied too: torch.save refuses both."""
    values: dict = {}
    pending = Pending(folder)
    writes = any(writes_in_place(n) for n in gm.graph.nodes)
    dtypes: dict = {}  # storage -> the dtype it was first recorded as
    originals = {p.name: x for p, x in zip(placeholders(gm), inputs)} if writes else {}

    class Recorder(fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            if isinstance(result, torch.Tensor) and node.op == "placeholder":
                dtypes.setdefault(_storage_of(result), result.dtype)
                pending.add(node.name, originals.get(node.name, result), values)
            elif isinstance(result, torch.Tensor):
                kept = result.detach()
                if writes or dtypes.setdefault(_storage_of(kept), kept.dtype) != kept.dtype:
                    kept = copy_tensor(kept)
                pending.add(node.name, kept, values)
            elif isinstance(result, (int, float, bool)):
                values[node.name] = result
            return result

    with torch.no_grad():
        Recorder(gm).run(*(clone_inputs(inputs) if writes else inputs))
    if folder is not None:
        save_atomically({n: v for n, v in values.items() if n not in pending.spilled}, folder / MAIN)
    return values


def writes_in_place(node: fx.Node) -> bool:
    """An in-place op, as Dynamo's graphs (`x.add_()`, `x[i] = v`) and AOT's (`aten.copy_`) write one."""
    if node.op == "call_method":
        return str(node.target).endswith("_") and not str(node.target).startswith("_")
    if node.op != "call_function":
        return False
    schema = getattr(node.target, "_schema", None)
    if schema is not None:
        return schema.is_mutable
    name = getattr(node.target, "__name__", "")
    return node.target is operator.setitem or (name.endswith("_") and not name.startswith("_"))


def _storage_of(x: torch.Tensor):
    return None if is_zero_tensor(x) else (x.device, x.untyped_storage().data_ptr())


class Pending:
    """Recorded tensors not yet on disk, and their bytes; past the budget they go to a shard."""

    def __init__(self, folder: Path | None):
        self.folder, self.budget = folder, memory_budget()
        self.names: list[str] = []
        self.bytes, self.shards = 0, 0
        self.spilled: set[str] = set()
        for stale in folder.glob(SHARD.format("*")) if folder is not None else ():  # an earlier run's
            stale.unlink()

    def add(self, name: str, value: torch.Tensor, values: dict) -> None:
        values[name] = value
        if self.folder is None:
            return
        self.names.append(name)
        self.bytes += nbytes(value)
        if self.bytes > self.budget:
            self.shards += 1
            self.spilled.update(self.names)
            values.update(spill({n: values.pop(n) for n in self.names}, self.folder, self.shards))
            self.names, self.bytes = [], 0


def rows_by_replayed_name(record: GraphRecord, gm: fx.GraphModule) -> dict[str, dict] | None:
    """nodes.json rows by the replayed graph's node names. Replay renames nodes (graph.py is
    re-traced; Dynamo had named them after the script's variables: `x`, `x_1`), but keeps their
    order, so rows match by position where the ops agree; None where they do not."""
    rows = record.node_rows()
    nodes = [n for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
    if len(rows) == len(nodes) and all(r["op"] == op_label(n) or r["op"] in str(n.target) for r, n in zip(rows, nodes)):
        return {n.name: r for r, n in zip(rows, nodes)}
    return None


def script_kernels(record: GraphRecord, gm: fx.GraphModule) -> list | None:
    """The kernel map the script's compile recorded (compiler.capture), its nodes renamed to
    `gm`'s; None when there is none or the nodes do not line up."""
    kernels, rows = record.record.get("kernels"), rows_by_replayed_name(record, gm)
    if not kernels or not rows:
        return None
    names = {row["name"]: name for name, row in rows.items()}
    return [{**k, "nodes": [names[n] for n in k["nodes"] if n in names]} for k in kernels]
