"""Graph edits that reduction passes are made of. Every edit returns a new GraphModule.

Node names are kept across edits, and each placeholder carries `meta["value"]`: the name of
the recorded eager value that feeds it (an original input, or an intermediate that was cut
out and replaced by its value). That is what lets a worker build a candidate's real inputs.
"""
from __future__ import annotations

import operator

import torch
import torch.fx as fx

NON_OPS = {operator.getitem}


def is_op(node: fx.Node) -> bool:
    return node.op in ("call_function", "call_method", "call_module") and node.target not in NON_OPS


def op_nodes(gm: fx.GraphModule) -> list[fx.Node]:
    return [n for n in gm.graph.nodes if is_op(n)]


def op_names(gm: fx.GraphModule) -> list[str]:
    return [n.name for n in op_nodes(gm)]


def placeholders(gm: fx.GraphModule) -> list[fx.Node]:
    return list(gm.graph.find_nodes(op="placeholder"))


def output_nodes(gm: fx.GraphModule) -> list[fx.Node]:
    out = next(iter(gm.graph.find_nodes(op="output")))
    return [a for a in _flat(out.args[0]) if isinstance(a, fx.Node)]


def _flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat(v)]
    if isinstance(value, dict):
        return [x for v in value.values() for x in _flat(v)]
    return [value]


def op_label(node: fx.Node) -> str:
    """A short op name for reports: `neg`, `maximum`, `linear`, `view`."""
    target = node.target
    if isinstance(target, str):
        return target
    name = getattr(target, "__name__", None) or str(target)
    if hasattr(target, "overloadpacket"):
        name = target.overloadpacket.__name__
    return name.split(".")[-1]


def rebuild(gm: fx.GraphModule, cut: set[str] = frozenset(), outputs: list[str] | None = None,
            values: dict | None = None) -> fx.GraphModule:
    """Copy of `gm` where nodes named in `cut` become inputs fed by their recorded values,
    the outputs are `outputs` (names) if given, and dead code and unused inputs are gone."""
    old = {n.name: n for n in gm.graph.nodes}
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            env[node] = graph.node_copy(node)
            env[node].meta["value"] = node.meta.get("value", node.name)
    for name in [n.name for n in gm.graph.nodes if n.name in cut]:
        node = old[name]
        if values is not None and not _is_value(values.get(node.name)):
            raise ValueError(f"{name} has no recorded value to feed it")
        env[node] = graph.placeholder(node.name)
        env[node].meta.update(node.meta)
        env[node].meta["value"] = node.name
    for node in gm.graph.nodes:
        if node in env:
            continue
        if node.op == "output" and outputs is not None:
            graph.output(tuple(env[old[name]] for name in outputs))
            continue
        env[node] = graph.node_copy(node, lambda n: env[n])
    return clean(fx.GraphModule(torch.nn.Module(), graph))


def _is_value(v) -> bool:
    return isinstance(v, (torch.Tensor, int, float, bool))


def clean(gm: fx.GraphModule) -> fx.GraphModule:
    """Remove dead ops and inputs nobody reads; the graph keeps its meaning."""
    graph = gm.graph
    for node in reversed(list(graph.nodes)):
        if node.op in ("call_function", "call_method") and not node.users and not _has_side_effect(node):
            graph.erase_node(node)
    for node in list(graph.find_nodes(op="placeholder")):
        if not node.users:
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm


def _has_side_effect(node: fx.Node) -> bool:
    if node.op == "call_method":
        return str(node.target).endswith("_") and not str(node.target).startswith("_")
    target = node.target
    schema = getattr(target, "_schema", None)
    if schema is not None:
        return schema.is_mutable
    name = getattr(target, "__name__", "")
    return name.endswith("_") and not name.startswith("_") or name in ("_set_grad_enabled",)


def sinks(gm: fx.GraphModule, upto: int) -> list[str]:
    """Names of ops among the first `upto + 1` whose value no later op in that prefix reads."""
    ops = op_nodes(gm)[: upto + 1]
    inside = set(ops)
    result = []
    for node in ops:
        readers = {u for u in node.users if u.op != "output"}
        readers |= {r for u in readers if u.target in NON_OPS for r in u.users}
        if not (readers & inside):
            result.append(node.name)
    return result
