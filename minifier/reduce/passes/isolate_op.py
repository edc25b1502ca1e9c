"""Keep one op alone: its operands become inputs fed by their recorded values."""
from __future__ import annotations

import torch.fx as fx

from minifier.graph.edit import op_nodes, rebuild
from minifier.reduce.passes import Context
from minifier.workers.judge import REPRODUCES


def isolate(gm: fx.GraphModule, name: str, ctx: Context) -> fx.GraphModule | None:
    node = next(n for n in gm.graph.nodes if n.name == name)
    operands = [a.name for a in node.all_input_nodes if a.op != "placeholder"]
    if any(ctx.values.get(a) is None for a in operands):
        return None
    return rebuild(gm, cut=set(operands), outputs=[name], values=ctx.values)


def isolate_last_op(gm, ev, ctx: Context):
    """After a prefix cut the culprit is usually the last op: try it on its own."""
    ops = op_nodes(gm)
    if len(ops) < 2:
        return None
    single = isolate(gm, ops[-1].name, ctx)
    return single if single is not None and ev.test(single) == REPRODUCES else None
