"""Replace ops by inputs fed with their recorded eager values (ddmin over the ops), then drop
whatever that leaves dead. Ends 1-minimal: no single remaining op can be cut."""
from __future__ import annotations

import operator

import torch
import torch.fx as fx

from minifier.graph.edit import is_op, op_names, rebuild
from minifier.reduce.delta import ddmin
from minifier.reduce.passes import Context


def replace_ops_with_inputs(gm, ev, ctx: Context):
    names = op_names(gm)
    cuttable = [n for n in names if isinstance(ctx.values.get(n), (torch.Tensor, int, float, bool))]
    cuttable += tuple_items(gm, ctx.values)
    if len(names) < 2 or not cuttable:
        return None

    def build(kept: list[str]):
        cut = set(cuttable) - set(kept)
        candidate = rebuild(gm, cut=cut, values=ctx.values)
        return candidate if op_names(candidate) else None

    kept = ddmin(ev, cuttable, build, ctx.window)
    if len(kept) == len(cuttable):
        return None
    return build(kept)


def tuple_items(gm, values: dict) -> list[str]:
    """`chunk[0]`, `split[1]`, ...: the items of an op that returns a tuple. The op itself has no
    single value to feed in, but once each item it feeds is an input, it is dead and goes."""
    return [n.name for n in gm.graph.nodes
            if n.op == "call_function" and n.target is operator.getitem and isinstance(n.args[0], fx.Node)
            and is_op(n.args[0]) and isinstance(values.get(n.name), torch.Tensor)]
