"""Replace ops by inputs fed with their recorded eager values (ddmin over the ops), then drop
whatever that leaves dead. Ends 1-minimal: no single remaining op can be cut."""
from __future__ import annotations

import torch

from minifier.delta import ddmin
from minifier.graph_edit import op_names, rebuild
from minifier.passes import Context


def replace_ops_with_inputs(gm, ev, ctx: Context):
    names = op_names(gm)
    cuttable = [n for n in names if isinstance(ctx.values.get(n), (torch.Tensor, int, float, bool))]
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
