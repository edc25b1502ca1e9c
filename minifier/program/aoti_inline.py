"""An exported graph's control flow made flat for the replay: each `torch.cond` replaced by the
branch its saved inputs take, each `torch.while_loop` by its body unrolled as many times as the
saved inputs run it.

The exported graph calls `torch.ops.higher_order.cond(pred, true_graph_0, false_graph_0,
operands)` with its branches as submodules (get_attr); the per-graph search, the repro writer and
torch.compile's replay all want one flat graph of ops. The predicate (and a loop's condition) is
evaluated on the saved inputs, so the flat graph computes what the package computed on them; it
is a different program (no cond), so the caller keeps it only where it still fails the same way.
A nested cond or loop (inside a branch or a body) comes up after its parent is inlined and is
flattened in turn. Any other higher-order op is named, not flattened.
"""
from __future__ import annotations

import copy
import operator
from dataclasses import dataclass

import torch
import torch.fx as fx

COND = torch.ops.higher_order.cond
WHILE_LOOP = torch.ops.higher_order.while_loop
MAX_ITERATIONS = 32  # a loop that runs more is not unrolled (the flat graph would be too long to reduce well)
MAX_STEPS = 64  # control-flow nodes flattened in one graph, nested ones included


@dataclass
class Flat:
    """The flat graph and one line per node flattened (what was inlined and why that branch)."""

    gm: fx.GraphModule
    notes: list[str]


class _Reached(Exception):
    def __init__(self, env: dict):
        super().__init__()
        self.env = env


class _Upto(fx.Interpreter):
    """Runs the graph on the saved inputs up to (not including) one node, keeping every value."""

    def __init__(self, gm: fx.GraphModule, stop: fx.Node):
        super().__init__(gm, garbage_collect_values=False)
        self.stop = stop

    def run_node(self, n: fx.Node):
        if n is self.stop:
            raise _Reached(self.env)
        return super().run_node(n)


def _values_before(gm: fx.GraphModule, node: fx.Node, inputs: list) -> dict:
    try:
        with torch.no_grad():
            _Upto(gm, node).run(*inputs)
    except _Reached as reached:
        return reached.env
    raise RuntimeError(f"{node.name} was not reached")


def control_flow(gm: fx.GraphModule) -> fx.Node | None:
    """The first node that calls a subgraph (a call_module, or an op given a submodule: a
    higher-order op such as cond), if any. A higher-order op given no subgraph (auto_functionalized,
    with_effects) is an op like any other."""
    def submodule(a) -> bool:
        return (isinstance(a, fx.Node) and a.op == "get_attr"
                and isinstance(getattr(gm, a.target, None), torch.nn.Module))

    for n in gm.graph.nodes:
        args = []
        fx.map_arg((n.args, n.kwargs), args.append)
        if n.op == "call_module" or (n.op == "call_function" and any(submodule(a) for a in args)):
            return n
    return None


def flatten(gm: fx.GraphModule, inputs: list, both_branches: bool = False) -> Flat | str:
    """A copy of `gm` with its torch.cond and torch.while_loop nodes flattened for `inputs` (one
    value per placeholder), or one line saying why it could not be. `both_branches`: the branch
    not taken is inlined too, its outputs returned beside the graph's own (a compile error can sit
    in either branch, since the package compiles both)."""
    gm = copy.deepcopy(gm)
    notes: list[str] = []
    for _ in range(MAX_STEPS):
        node = control_flow(gm)
        if node is None:
            if notes:  # the predicates, evaluated already (a graph without control flow is left as it was)
                gm.graph.eliminate_dead_code()
            _drop_unused_submodules(gm)
            gm.recompile()
            return Flat(gm, notes)
        if node.target in (COND, WHILE_LOOP):
            try:
                why = (_inline_cond(gm, node, inputs, notes, both_branches) if node.target is COND
                       else _unroll_while(gm, node, inputs, notes))
            except Exception as exc:  # the graph, run eagerly up to it on the saved inputs, raised
                why = (f"its `{node.name}` could not be flattened for the saved inputs "
                       f"({type(exc).__name__}: {str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ''})")
        else:
            what = node.target if node.op == "call_module" else getattr(node.target, "__name__", node.target)
            why = (f"its exported graph calls {what} on a subgraph, which minify cannot flatten "
                   f"(only torch.cond and torch.while_loop)")
        if why:
            return why
        gm.recompile()
    return f"its exported graph holds more than {MAX_STEPS} torch.cond / torch.while_loop calls"


def _inline_cond(gm: fx.GraphModule, node: fx.Node, inputs: list, notes: list[str], both: bool) -> str | None:
    pred, true_attr, false_attr, operands = node.args[:4]
    env = _values_before(gm, node, inputs)
    value = env[pred] if isinstance(pred, fx.Node) else pred
    taken = bool(value)
    attr, other = (true_attr, false_attr) if taken else (false_attr, true_attr)
    outs = _inline(gm, node, getattr(gm, attr.target), list(operands))
    why = _replace_outputs(node, outs)
    if why is not None:
        return why
    note = (f"torch.cond `{node.name}`: its {'true' if taken else 'false'} branch ({attr.target}), the one the "
            f"saved inputs take, inlined")
    if both:
        _return_too(gm, _inline(gm, node, getattr(gm, other.target), list(operands)))
        note += f", and the branch not taken ({other.target}) beside it, its outputs returned too"
    notes.append(note)
    _erase(gm, node)
    return None


def _return_too(gm: fx.GraphModule, outs: list) -> None:
    """Extra outputs of the graph (so that the ops computing them are kept and compiled)."""
    output = next(n for n in gm.graph.nodes if n.op == "output")
    returned = output.args[0]
    returned = list(returned) if isinstance(returned, (tuple, list)) else [returned]
    output.args = (tuple(returned + [o for o in outs if isinstance(o, fx.Node)]),)


def _unroll_while(gm: fx.GraphModule, node: fx.Node, inputs: list, notes: list[str]) -> str | None:
    cond_attr, body_attr, carried, extra = node.args[:4]
    cond_fn, body_fn = getattr(gm, cond_attr.target), getattr(gm, body_attr.target)
    env = _values_before(gm, node, inputs)
    values = [env[a] if isinstance(a, fx.Node) else a for a in carried]
    extra_values = [env[a] if isinstance(a, fx.Node) else a for a in extra]
    count = 0
    with torch.no_grad():
        while bool(cond_fn(*values, *extra_values)):
            count += 1
            if count > MAX_ITERATIONS:
                return (f"its torch.while_loop `{node.name}` runs more than {MAX_ITERATIONS} iterations on the saved "
                        f"inputs, too many to unroll")
            values = list(body_fn(*values, *extra_values))
    outs = list(carried)
    for _ in range(count):
        outs = _inline(gm, node, body_fn, outs + list(extra))
    why = _replace_outputs(node, outs)
    if why is None:
        notes.append(f"torch.while_loop `{node.name}`: its body ({body_attr.target}) unrolled {count} times, "
                     f"as many as the saved inputs run it")
        _erase(gm, node)
    return why


def _inline(gm: fx.GraphModule, at: fx.Node, sub: fx.GraphModule, args: list) -> list:
    """Copies of `sub`'s nodes inserted before `at`, its placeholders bound to `args`; its outputs."""
    env: dict = dict(zip([n for n in sub.graph.nodes if n.op == "placeholder"], args))
    out = None
    with gm.graph.inserting_before(at):
        for n in sub.graph.nodes:
            if n.op == "placeholder":
                continue
            if n.op == "output":
                out = n.args[0]
                break
            if n.op == "get_attr":  # a nested cond's branch, or a constant of the subgraph
                name = _fresh_name(gm, n.target)
                held = getattr(sub, n.target)
                if isinstance(held, torch.nn.Module):
                    gm.add_submodule(name, copy.deepcopy(held))
                else:
                    setattr(gm, name, held)
                env[n] = gm.graph.get_attr(name)
                continue
            env[n] = gm.graph.node_copy(n, lambda x: env[x])
    mapped = fx.map_arg(out, lambda x: env[x])
    return list(mapped) if isinstance(mapped, (tuple, list)) else [mapped]


def _replace_outputs(node: fx.Node, outs: list) -> str | None:
    users = list(node.users)
    if any(u.target is not operator.getitem for u in users):
        return f"its exported graph uses the outputs of `{node.name}` other than one by one"
    for user in users:
        user.replace_all_uses_with(outs[user.args[1]])
        user.graph.erase_node(user)
    return None


def _erase(gm: fx.GraphModule, node: fx.Node) -> None:
    held = [a for a in node.args[:3] if isinstance(a, fx.Node) and a.op == "get_attr"]
    gm.graph.erase_node(node)
    for attr in dict.fromkeys(held):
        if not attr.users:
            gm.graph.erase_node(attr)


def _fresh_name(gm: fx.GraphModule, base: str) -> str:
    name, i = base, 0
    while hasattr(gm, name):
        i += 1
        name = f"{base}_{i}"
    return name


def _drop_unused_submodules(gm: fx.GraphModule) -> None:
    used = {n.target for n in gm.graph.nodes if n.op in ("get_attr", "call_module")}
    for name, _ in list(gm.named_children()):
        if name not in used:
            delattr(gm, name)
