"""Smaller inputs: shrink each distinct dim size (a "size class": every input dim of that size,
and the same number where the graph hard-codes a size, e.g. `view(8, 32, 100)`) while the bug
persists. Every class goes to 1 at once first; the delta core finds the classes that must
stay, and a bisection then finds the smallest size each of those still fails at (two steps a
round where three workers check side by side).

Dynamo graphs hard-code sizes, so a class shrinks in the graph's size arguments too. Where
that is not enough (a size that is a product of others, a group count), the candidate fails
shape propagation on fake tensors and is rejected without a compile.
"""
from __future__ import annotations

import operator

import torch
import torch.fx as fx

from minifier.graph.edit import clean, new_module
from minifier.graph.input_transforms import meta_of, step_of, with_step
from minifier.reduce.delta import bisect_down, ddmin
from minifier.reduce.passes import Context
from minifier.reduce.validate import fake_values

# Ops whose arguments from `first` on (or keyword `name`) are sizes, not dims or counts.
SIZE_METHODS = {"view": 1, "reshape": 1, "expand": 1, "new_zeros": 1, "new_ones": 1, "new_empty": 1,
                "new_full": 1, "broadcast_to": 1}
SIZE_FUNCTIONS = {torch.reshape: 1, torch.broadcast_to: 1, torch.zeros: 0, torch.ones: 0, torch.empty: 0,
                  torch.full: 0, torch.rand: 0, torch.randn: 0, torch.nn.functional.layer_norm: 1,
                  torch.layer_norm: 1}
SIZE_KWARGS = ("size", "shape", "normalized_shape")


def shrink_shapes(gm, ev, ctx: Context):
    classes = size_classes(gm, ctx.values)
    if not classes:
        return None
    kept = ddmin(ev, classes, lambda kept: resize(gm, ctx.values, {c: 1 for c in classes if c not in kept}),
                 ctx.window)
    best = resize(gm, ctx.values, {c: 1 for c in classes if c not in kept}) if len(kept) < len(classes) else gm
    for size in kept:  # 1 loses the bug: the smallest size that keeps it (each step shrinks the last kept)
        _, best = bisect_down(ev, lambda g, at, n: resize(g, ctx.values, {at: n}), best, 1, size, ctx.window)
    return best if best is not gm else None


def size_classes(gm: fx.GraphModule, values: dict) -> list[int]:
    """Distinct dim sizes above 1 among the inputs, largest first."""
    sizes = set()
    for p in gm.graph.find_nodes(op="placeholder"):
        current = meta_of(values.get(p.meta.get("value", p.name)), p.meta.get("transform"))
        if isinstance(current, torch.Tensor):
            sizes |= {d for d in current.shape if d > 1}
    return sorted(sizes, reverse=True)


def resize(gm: fx.GraphModule, values: dict, mapping: dict[int, int]) -> fx.GraphModule:
    """Copy of `gm` where every input dim and hard-coded size `s` in `mapping` becomes `mapping[s]`."""
    def shrink(shape):
        return tuple(mapping.get(d, d) for d in shape)

    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    for node in gm.graph.nodes:
        new = env[node] = graph.node_copy(node, lambda n: env[n])
        if node.op == "placeholder":
            value = values.get(node.meta.get("value", node.name))
            transform = node.meta.get("transform")
            if isinstance(value, torch.Tensor) and shrink(meta_of(value, transform).shape) != meta_of(value, transform).shape:
                block = step_of(transform, "shape")
                transform = with_step(transform, ("shape", shrink(block[1] if block else value.shape)))
                view = step_of(transform, "view")
                if view:
                    transform = with_step(transform, ("view", shrink(view[1])))
                new.meta = {**node.meta, "transform": transform}
        elif _size_from(node) is not None:
            first = _size_from(node)
            new.args = tuple(_map_ints(a, mapping) if i >= first else a for i, a in enumerate(new.args))
            new.kwargs = {k: _map_ints(v, mapping) if k in SIZE_KWARGS else v for k, v in new.kwargs.items()}
    result = clean(new_module(graph, gm))
    result.meta["sizes"] = compose(gm.meta.get("sizes", {}), mapping)
    return infer_one_dim(result, values)


def infer_one_dim(gm: fx.GraphModule, values: dict) -> fx.GraphModule:
    """Where a hard-coded view/reshape size no longer fits (it was a product of shrunk dims,
    e.g. `reshape(8, 3200)` for 32 * 100), let torch infer the one size no input has: -1."""
    present = set(size_classes(gm, values))

    def retry(node: fx.Node, exc: Exception) -> bool:
        first = _size_from(node)
        if node.target not in ("view", "reshape", torch.reshape) or first is None:
            return False
        sizes = list(node.args[first]) if len(node.args) == first + 1 and isinstance(node.args[first], (tuple, list)) \
            else list(node.args[first:])
        if -1 in sizes or not all(isinstance(d, int) for d in sizes):
            return False
        stale = [i for i, d in enumerate(sizes) if d > 1 and d not in present]
        if len(stale) != 1:
            return False
        sizes[stale[0]] = -1
        node.args = (*node.args[:first], *sizes)
        return True

    try:
        fake_values(gm, values, retry)
    except Exception:
        return gm  # still invalid: the evaluator's check will say why, without compiling
    gm.recompile()
    return gm


def compose(sizes: dict[int, int], mapping: dict[int, int]) -> dict[int, int]:
    """Original size -> current size, after `mapping` (current -> new) is applied on top."""
    out = {d: mapping.get(sizes.get(d, d), sizes.get(d, d)) for d in set(sizes) | set(mapping)}
    return {d: s for d, s in sorted(out.items()) if d != s}


def _size_from(node: fx.Node) -> int | None:
    if node.op == "call_method":
        return SIZE_METHODS.get(node.target)
    if node.op == "call_function" and node.target is not operator.getitem:
        try:
            return SIZE_FUNCTIONS.get(node.target)
        except TypeError:  # unhashable target
            return None
    return None


def _map_ints(value, mapping: dict[int, int]):
    if isinstance(value, bool) or not isinstance(value, (int, tuple, list, torch.Size)):
        return value
    if isinstance(value, int):
        return mapping.get(value, value) if value > 1 else value
    return type(value)(_map_ints(v, mapping) for v in value) if not isinstance(value, torch.Size) \
        else torch.Size(_map_ints(v, mapping) for v in value)
