"""Graphs holding functional collectives (`torch.ops._c10d_functional.*`), made replayable on one
process: each collective replaced by the result it gave on this rank (docs/distributed.md).

At a graph's first call the capture runs it eagerly once through `Recorder`, which keeps each
collective's input and result. The graph is then rewritten so that no collective is left: an
all_reduce whose op is sum, max or min becomes `combine(input, PEERS)` with PEERS a new input
(sum: the result less this rank's input; max, min: the result), so a wrong value computed
before the collective still reaches the outputs as it did on the rank; any other collective
becomes its recorded result. The original graph and inputs are kept beside
(`graph_collective.py`, `collective_inputs.pt`): a bug of the collective itself does not
reproduce without it, and needs the ranks (minifier/distributed/two_rank.py).
"""
from __future__ import annotations

import torch
import torch.fx as fx

NAMESPACE = "_c10d_functional"
_COMBINE = {"sum": torch.add, "max": torch.maximum, "min": torch.minimum}


def is_collective(node: fx.Node) -> bool:
    return node.op == "call_function" and f"{NAMESPACE}." in str(node.target) and "wait_tensor" not in str(node.target)


def is_wait(node: fx.Node) -> bool:
    return node.op == "call_function" and f"{NAMESPACE}.wait_tensor" in str(node.target)


def collective_waits(gm: fx.GraphModule) -> list[fx.Node]:
    """The wait_tensor nodes whose argument is a collective: each stands for one collective's result."""
    return [n for n in gm.graph.nodes if is_wait(n) and isinstance(n.args[0], fx.Node) and is_collective(n.args[0])]


def has_collectives(gm: fx.GraphModule) -> bool:
    return any(is_collective(n) for n in gm.graph.nodes)


def op_name(node: fx.Node) -> str:
    """`all_reduce` of `_c10d_functional.all_reduce.default`."""
    return str(node.target).split(".")[1] if "." in str(node.target) else str(node.target)


class Recorder(torch.fx.Interpreter):
    """Runs the graph as eager does, keeping each collective's input and result by the wait's name."""

    def __init__(self, gm: fx.GraphModule):
        super().__init__(gm)
        self.seen: dict[str, dict] = {}
        self.inputs: dict[fx.Node, torch.Tensor | None] = {}

    def run_node(self, n: fx.Node):
        if is_collective(n):  # its input, while the interpreter still holds it
            self.inputs[n] = _copy(self.env[n.args[0]]) if isinstance(n.args[0], fx.Node) else None
        value = super().run_node(n)
        if is_wait(n) and isinstance(n.args[0], fx.Node) and is_collective(n.args[0]):
            coll = n.args[0]
            self.seen[n.name] = {"op": op_name(coll), "args": [a if not isinstance(a, fx.Node) else None
                                                                for a in coll.args],
                                 "input": self.inputs.get(coll), "result": _copy(value)}
        return value


def _copy(value):
    return value.detach().clone() if isinstance(value, torch.Tensor) else None


def peers_value(entry: dict) -> torch.Tensor | None:
    """The value the rewritten graph feeds in place of the collective (see the module's docstring)."""
    result, first = entry["result"], entry["input"]
    reduce_op = entry["args"][1] if entry["op"] == "all_reduce" and len(entry["args"]) > 1 else None
    if result is None:
        return None
    if reduce_op == "sum" and first is not None and first.shape == result.shape:
        return result - first
    return result


def without_collectives(gm: fx.GraphModule, seen: dict[str, dict]) -> tuple[fx.GraphModule, list[str]]:
    """A copy of `gm` with each recorded collective replaced (module docstring), and the waits
    replaced, in the order of the new inputs appended after the graph's own."""
    gm = fx.GraphModule(gm, gm.graph.__deepcopy__())
    graph = gm.graph
    last = list(graph.find_nodes(op="placeholder"))[-1]
    waits: list[str] = []
    for wait in collective_waits(gm):
        entry = seen.get(wait.name)
        if entry is None:
            raise ValueError(f"collective {wait.name} was not recorded")
        coll = wait.args[0]
        with graph.inserting_after(last):
            last = graph.placeholder(f"{wait.name}_peers")
        last.meta = {k: v for k, v in wait.meta.items() if k in ("example_value", "val", "tensor_meta")}
        waits.append(wait.name)
        reduce_op = coll.args[1] if op_name(coll) == "all_reduce" and len(coll.args) > 1 else None
        with graph.inserting_before(wait):
            value = (graph.call_function(_COMBINE[reduce_op], (coll.args[0], last)) if reduce_op in _COMBINE
                     else last)
        wait.replace_all_uses_with(value)
        graph.erase_node(wait)
        if not coll.users:
            graph.erase_node(coll)
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    return gm, waits

