"""Replace an operand by something simpler, so that what computed it (or the input that fed
it) can go: an earlier value of the same shape, dtype and strides (inputs first), or a plain
scalar. llvm-reduce's operands-to-args / operands-one, on FX.

Each operand gets its first replacement that runs on fake tensors and frees something (an op
or an input); the delta core then finds which replacements the bug survives together.
"""
from __future__ import annotations

import torch
import torch.fx as fx

from minifier.graph.edit import clean, new_module, op_nodes
from minifier.reduce.delta import ddmin
from minifier.reduce.passes import Context
from minifier.reduce.score import score
from minifier.reduce.validate import fake_values, why_invalid

MAX_OPS = 30  # a pass for the end game: each operand costs a shape propagation or two
Slot = tuple[str, object]  # (node name, argument position or keyword)


def replace_operands(gm, ev, ctx: Context):
    ops = op_nodes(gm)
    if not ops or len(ops) > MAX_OPS:
        return None
    try:
        fakes = fake_values(gm, ctx.values)
    except Exception:
        return None
    base = score(gm, ctx.values)
    order = {n: i for i, n in enumerate(gm.graph.nodes)}
    choices: dict[Slot, object] = {}
    for node in ops:
        for slot, arg in _operand_slots(node):
            for alternative in _alternatives(gm, node, arg, fakes, order):
                candidate = replace(gm, {(node.name, slot): alternative})
                if score(candidate, ctx.values) < base and why_invalid(candidate, ctx.values) is None:
                    choices[(node.name, slot)] = alternative
                    break
    if not choices:
        return None
    slots = list(choices)

    def build(kept: list[Slot]) -> fx.GraphModule | None:
        candidate = replace(gm, {s: choices[s] for s in slots if s not in kept})
        return candidate if score(candidate, ctx.values) < base else None  # swaps can cancel out

    kept = ddmin(ev, slots, build, ctx.window)
    return build(kept) if len(kept) < len(slots) else None


def _operand_slots(node: fx.Node):
    for i, arg in enumerate(node.args):
        if isinstance(arg, fx.Node):
            yield i, arg
    for key, arg in node.kwargs.items():
        if isinstance(arg, fx.Node):
            yield key, arg


def _alternatives(gm, node: fx.Node, arg: fx.Node, fakes: dict, order: dict):
    """Earlier values that look exactly like `arg` (inputs first), then a scalar one."""
    like = fakes.get(arg.name)
    if not isinstance(like, torch.Tensor):
        return
    earlier = [n for n in gm.graph.nodes if order[n] < order[node] and n is not arg and n.op != "output"]
    for n in sorted(earlier, key=lambda n: (n.op != "placeholder", order[n])):
        other = fakes.get(n.name)
        if (isinstance(other, torch.Tensor) and other.shape == like.shape and other.dtype == like.dtype
                and other.stride() == like.stride()):
            yield n.name
    yield ("scalar", True if like.dtype == torch.bool else 1.0 if like.is_floating_point() else 1)


def replace(gm: fx.GraphModule, replacements: dict[Slot, object]) -> fx.GraphModule:
    """Copy of `gm` with the operand in each slot replaced by a node (by name) or a scalar."""
    graph = fx.Graph()
    env: dict[str, fx.Node] = {}
    for node in gm.graph.nodes:
        new = graph.node_copy(node, lambda n: env[n.name])
        env[node.name] = new
        for (name, slot), what in replacements.items():
            if name != node.name:
                continue
            value = what[1] if isinstance(what, tuple) else env[what]
            if isinstance(slot, int):
                new.args = tuple(value if i == slot else a for i, a in enumerate(new.args))
            else:
                new.kwargs = {**new.kwargs, slot: value}
    return clean(new_module(graph, gm))
