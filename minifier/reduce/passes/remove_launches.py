"""Drop launches of user Triton kernels that the failure does not need (and what only they read).

A launch returns nothing and writes into the tensors it is given, so no other pass removes one:
clean() keeps it (its writes may be read) and no op can take its place. A candidate whose
remaining ops read a buffer that only a dropped launch wrote is invalid (validate.py)."""
from __future__ import annotations

import copy

from compiler.user_kernels import launches
from minifier.graph.edit import clean, op_names
from minifier.reduce.delta import ddmin
from minifier.reduce.passes import Context


def remove_launches(gm, ev, ctx: Context):
    names = [n.name for n in launches(gm)]
    if not names:
        return None

    def build(kept: list[str]):
        candidate = copy.deepcopy(gm)
        for node in launches(candidate):
            if node.name not in kept:
                candidate.graph.erase_node(node)
        candidate = clean(candidate)
        return candidate if op_names(candidate) else None

    kept = ddmin(ev, names, build, ctx.window)
    return build(kept) if len(kept) < len(names) else None
