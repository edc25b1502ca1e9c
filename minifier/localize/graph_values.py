"""A captured graph as a module with its real inputs, and every value it computes on them.

What every later stage starts from: the search reduces the graph against these values, the
numerics check replays it, and workers feed candidates from them.
"""
from __future__ import annotations

import torch
import torch.fx as fx

from compiler.graph_code import module_from_source, placeholders, trace_module
from minifier.localize.capture_run import GraphRecord
from minifier.reduce.graph_edit import op_label
from repro.inputs import load_inputs


def load_graph(record: GraphRecord) -> tuple[fx.GraphModule, list]:
    source = (record.folder / "graph.py").read_text()
    gm = trace_module(module_from_source(source))
    inputs = load_inputs(record.folder / "inputs.pt")
    for p in placeholders(gm):
        p.target = p.name  # `def forward(self, x)` rather than `def forward(self, L_x_): x = L_x_`
        p.meta["value"] = p.name
    return gm, inputs


def record_values(gm: fx.GraphModule, inputs: list) -> dict:
    """Every value the graph computes on its real inputs, by node name (eager, fp as-is)."""
    values: dict = {}

    class Recorder(fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            if isinstance(result, torch.Tensor):
                values[node.name] = result.detach() if node.op != "placeholder" else result
            elif isinstance(result, (int, float, bool)):
                values[node.name] = result
            return result

    with torch.no_grad():
        Recorder(gm).run(*inputs)
    return values


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
