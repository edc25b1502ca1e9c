"""Fold a pointwise op into the input it reads through views: `log1p(abs(x[..., ::2]))` fed
with x becomes `log1p(y[..., ::2])` fed with y = abs(x).

Replacing abs by an input fed with its recorded value would lose the stride-2 read, and
with it the code path (a scalar C++ loop, a strided Triton load) the bug lives on. A
pointwise op commutes with views and copies that only pick or move elements, so applying it
to the whole input first computes the same values through the same reads, one op fewer.
That it commutes is checked on the real values before anything is compiled: the folded graph
must compute bit for bit what the op computed.
"""
from __future__ import annotations

import torch
import torch.fx as fx

from minifier.graph.edit import clean, new_module, op_nodes
from minifier.graph.input_transforms import resolve, resolve_function, step_of, with_step
from minifier.reduce.passes import Context
from minifier.workers.judge import REPRODUCES

CONSTANTS = (int, float, bool, str, type(None), torch.dtype)
MODULES = ("torch", "torch.nn.functional", "torch.special", "operator")


def fold_into_input(gm, ev, ctx: Context):
    """Fold ops one at a time, last first, while the bug stays."""
    best = None
    while True:
        current = best or gm
        for node in reversed(op_nodes(current)):
            candidate = fold(current, node.name, ctx) if len(op_nodes(current)) > 1 else None
            if candidate is not None and ev.test(candidate) == REPRODUCES:
                best = candidate
                break
        else:
            return best


def fold(gm: fx.GraphModule, name: str, ctx: Context) -> fx.GraphModule | None:
    """`gm` with op `name` applied to the input under it instead, or None when it cannot be
    (not one operand, no views-only path to an input, or the values would change)."""
    node = next(n for n in gm.graph.nodes if n.name == name)
    chain = _path_to_input(node)
    op = _as_step(node)
    if chain is None or len(chain) < 2 or op is None:
        return None
    source = chain[0]
    value_name = source.meta.get("value", source.name)
    old = source.meta.get("transform")
    done = step_of(old, "map")
    transform = with_step(old, ("map", (*(done[1] if done else ()), op)))
    try:
        before = _run([*chain[1:], node], resolve(ctx.values, (value_name, old)))
        after = _run(chain[1:], resolve(ctx.values, (value_name, transform)))
    except Exception:
        return None
    if not (isinstance(before, torch.Tensor) and isinstance(after, torch.Tensor) and _identical(before, after)):
        return None
    return _rewire(gm, chain, node, transform)


def _path_to_input(node: fx.Node) -> list[fx.Node] | None:
    """[input, view, ..., operand]: the nodes from an input to `node`'s one operand, each
    reading only the one before it (None when `node` reads more than one value)."""
    if len(node.all_input_nodes) != 1 or node.args[:1] != (node.all_input_nodes[0],):
        return None
    path = [node.all_input_nodes[0]]
    while path[0].op != "placeholder":
        head = path[0]
        if head.op not in ("call_function", "call_method") or len(head.all_input_nodes) != 1 \
                or head.args[:1] != (head.all_input_nodes[0],):
            return None
        path.insert(0, head.all_input_nodes[0])
    return path


def _as_step(node: fx.Node) -> tuple | None:
    """The op as a map step (input_transforms._map), or None if it cannot be spelled as one."""
    args, kwargs = node.args[1:], tuple(sorted(node.kwargs.items()))
    if not all(_constant(a) for a in (*args, *(v for _, v in kwargs))):
        return None
    if node.op == "call_method":
        return ("method", node.target, tuple(args), kwargs)
    if node.op != "call_function":
        return None
    name = getattr(node.target, "__name__", None)
    names = [f"{module}.{name}" for module in MODULES] if name else []
    if hasattr(node.target, "overloadpacket"):  # an aten op, in graphs AOTAutograd made: aten.abs.default
        names = [f"torch.ops.{node.target}"]
    for dotted in names:
        try:
            if resolve_function(dotted) is node.target:
                return ("function", dotted, tuple(args), kwargs)
        except (ImportError, AttributeError):
            continue
    return None


def _constant(value) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_constant(v) for v in value)
    return isinstance(value, CONSTANTS)


def _run(nodes: list[fx.Node], value):
    """Evaluate a chain of one-operand nodes on a real value."""
    for node in nodes:
        args = fx.node.map_arg(node.args, lambda _: value)
        kwargs = fx.node.map_arg(node.kwargs, lambda _: value)
        value = getattr(args[0], node.target)(*args[1:], **kwargs) if node.op == "call_method" \
            else node.target(*args, **kwargs)
    return value


def _identical(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.is_floating_point() or a.is_complex():
        return torch.allclose(a, b, rtol=0.0, atol=0.0, equal_nan=True)
    return torch.equal(a, b)


def _rewire(gm: fx.GraphModule, chain: list[fx.Node], node: fx.Node, transform) -> fx.GraphModule:
    """A new input fed with the folded value, the views copied onto it, and `node`'s users
    reading the last copy; what is left unread goes."""
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    names = {n.name for n in gm.graph.nodes}
    fresh = _unused(f"{chain[0].name}_{node.name}", names)
    for old in gm.graph.nodes:
        if old.op != "placeholder":
            continue
        env[old] = graph.node_copy(old)
    folded = graph.placeholder(fresh)
    folded.meta.update(chain[0].meta)
    folded.meta["value"] = chain[0].meta.get("value", chain[0].name)
    folded.meta["transform"] = transform
    for old in gm.graph.nodes:
        if old.op == "placeholder":
            continue
        if old is node:
            copy = folded
            for view in chain[1:]:
                copy = graph.node_copy(view, lambda _: copy)
            env[old] = copy
            continue
        env[old] = graph.node_copy(old, lambda n: env[n])
    return clean(new_module(graph, gm))


def _unused(name: str, taken: set[str]) -> str:
    candidate, i = name, 1
    while candidate in taken:
        candidate, i = f"{name}_{i}", i + 1
    return candidate
