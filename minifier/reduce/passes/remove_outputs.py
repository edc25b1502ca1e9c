"""Drop outputs the failure does not need (and the ops only they needed)."""
from __future__ import annotations

from minifier.graph.edit import op_names, output_nodes, rebuild
from minifier.reduce.delta import ddmin
from minifier.reduce.passes import Context


def remove_outputs(gm, ev, ctx: Context):
    outputs = list(dict.fromkeys(n.name for n in output_nodes(gm)))
    if len(outputs) < 2:
        return None

    def build(kept: list[str]):
        candidate = rebuild(gm, outputs=kept)
        return candidate if op_names(candidate) else None

    kept = ddmin(ev, outputs, build, ctx.window)
    return build(kept) if len(kept) < len(outputs) else None
