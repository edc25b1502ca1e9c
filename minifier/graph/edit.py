"""Graph edits that reduction passes are made of. Every edit returns a new GraphModule.

Node names are kept across edits, and each placeholder carries `meta["value"]`: the name of
the recorded eager value that feeds it (an original input, or an intermediate that was cut
out and replaced by its value), and optionally `meta["transform"]`: how that value is
simplified first (see minifier.graph.input_transforms). That is what lets a worker build a
candidate's real inputs. `gm.meta["sizes"]` maps original dim sizes to the sizes inputs were
shrunk to, so a value cut out later is shrunk the same way.
"""
from __future__ import annotations

import operator

import torch
import torch.fx as fx

from compiler.custom_ops import op_schema
from compiler.graph_code import placeholders, printable
from compiler.user_kernels import is_launch
from minifier.graph.input_transforms import resolve, with_step

NON_OPS = {operator.getitem}


def is_op(node: fx.Node) -> bool:
    return node.op in ("call_function", "call_method", "call_module") and node.target not in NON_OPS


def op_nodes(gm: fx.GraphModule) -> list[fx.Node]:
    return [n for n in gm.graph.nodes if is_op(n)]


def op_names(gm: fx.GraphModule) -> list[str]:
    return [n.name for n in op_nodes(gm)]


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
        env[node].meta.pop("transform", None)
        shrunk = shrunk_shape(values.get(node.name) if values is not None else None, gm.meta.get("sizes", {}))
        if shrunk is not None:
            env[node].meta["transform"] = with_step(None, ("shape", shrunk))
    for node in gm.graph.nodes:
        if node in env:
            continue
        if node.op == "output" and outputs is not None:
            graph.output(tuple(env[old[name]] for name in outputs))
            continue
        env[node] = graph.node_copy(node, lambda n: env[n])
    return clean(new_module(graph, gm))


def new_module(graph: fx.Graph, like: fx.GraphModule) -> fx.GraphModule:
    """A GraphModule for `graph` that keeps what `like` knows about its inputs (meta)."""
    gm = fx.GraphModule(torch.nn.Module(), printable(graph))  # valid code for any constant
    gm.meta.update({k: v for k, v in like.meta.items() if k == "sizes"})
    return gm


def shrunk_shape(value, sizes: dict) -> tuple | None:
    """The shape a cut-out value takes once dims were shrunk by `sizes` (None: unchanged)."""
    if not sizes or not isinstance(value, torch.Tensor):
        return None
    shape = tuple(sizes.get(d, d) for d in value.shape)
    return shape if shape != tuple(value.shape) else None


def input_ref(node: fx.Node):
    """What a worker needs to build a placeholder's value: `name` or `(name, transform)`."""
    name = node.meta.get("value", node.name)
    transform = node.meta.get("transform")
    return (name, transform) if transform else name


def graph_inputs(gm: fx.GraphModule, values: dict) -> list:
    """The real inputs of `gm`, transforms applied: what the repro saves and the worker feeds."""
    return [resolve(values, input_ref(p)) for p in placeholders(gm)]


def with_transforms(gm: fx.GraphModule, transforms: dict[str, tuple | None]) -> fx.GraphModule:
    """Copy of `gm` whose placeholders named in `transforms` carry those transforms."""
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for node in gm.graph.nodes:
        env[node] = graph.node_copy(node, lambda n: env[n])
        if node.op == "placeholder" and node.name in transforms:
            env[node].meta = dict(node.meta)
            env[node].meta["transform"] = transforms[node.name]
            if not transforms[node.name]:
                env[node].meta.pop("transform")
    new = new_module(graph, gm)
    new.recompile()
    return new


def canonical(gm: fx.GraphModule) -> fx.GraphModule:
    """The same graph with deterministic names and input order, so that one bug always gives
    one repro: inputs `arg0, arg1, ...` in order of first use, ops named after what they call."""
    first_use: list[fx.Node] = []
    for node in gm.graph.nodes:
        for arg in node.all_input_nodes:
            if arg.op == "placeholder" and arg not in first_use:
                first_use.append(arg)
    inputs = first_use + [p for p in placeholders(gm) if p not in first_use]
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for i, p in enumerate(inputs):
        env[p] = graph.placeholder(f"arg{i}")
        env[p].meta = {k: v for k, v in p.meta.items() if k in ("value", "transform")}
    for node in gm.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            graph.output(fx.map_arg(node.args[0], lambda n: env[n]))
            continue
        args = fx.map_arg(node.args, lambda n: env[n])
        kwargs = fx.map_arg(node.kwargs, lambda n: env[n])
        env[node] = graph.create_node(node.op, node.target, args, kwargs, name=op_label(node))
    new = new_module(graph, gm)
    new.recompile()
    return new


def _is_value(v) -> bool:
    return isinstance(v, (torch.Tensor, int, float, bool))


def clean(gm: fx.GraphModule) -> fx.GraphModule:
    """Remove dead ops and inputs nobody reads; the graph keeps its meaning."""
    graph = gm.graph
    for node in reversed(list(graph.nodes)):
        if node.op in ("call_function", "call_method") and not node.users and not has_side_effect(node):
            graph.erase_node(node)
    for node in list(graph.find_nodes(op="placeholder")):
        if not node.users:
            graph.erase_node(node)
    graph.lint()
    gm.recompile()
    return gm


# Python's operator functions that change their first operand; `and_`, `or_`, `not_` (the
# trailing underscore only dodges a keyword) do not.
_OPERATOR_MUTATES = {"setitem", "delitem", "iadd", "iand", "iconcat", "ifloordiv", "ilshift", "imod", "imul",
                     "imatmul", "ior", "ipow", "irshift", "isub", "itruediv", "ixor"}


def has_side_effect(node: fx.Node) -> bool:
    if node.op == "call_method":
        return str(node.target).endswith("_") and not str(node.target).startswith("_")
    target = node.target
    if is_launch(target):  # a user Triton kernel writes into the tensors it is given
        return True
    schema = op_schema(target)
    if schema is not None:
        return schema.is_mutable
    name = getattr(target, "__name__", "")
    if getattr(target, "__module__", None) in ("_operator", "operator"):
        return name in _OPERATOR_MUTATES
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
