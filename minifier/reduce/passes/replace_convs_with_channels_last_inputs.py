"""Replace convolutions by inputs laid out as Inductor lays out their outputs: channels_last.

Inductor's layout optimization gives a conv net's convolution outputs channels_last strides,
and the kernels after a conv are generated for that layout (for example vectorized along
channels). replace_ops_with_inputs feeds a conv's eager value, which is contiguous, so the
kernels change and a bug that lives in them is lost with the conv. Fed in channels_last
instead, the conv can go and the kernels after it stay as they were.
"""
from __future__ import annotations

import torch

from minifier.graph.edit import op_label, op_names, op_nodes, placeholders, rebuild, with_transforms
from minifier.graph.input_transforms import channels_last_format, with_step
from minifier.reduce.delta import ddmin
from minifier.reduce.passes import Context

CONVOLUTIONS = {"conv2d", "conv3d", "convolution", "_convolution", "conv_transpose2d", "conv_transpose3d"}


def replace_convs_with_channels_last_inputs(gm, ev, ctx: Context):
    convs = [n.name for n in op_nodes(gm) if op_label(n) in CONVOLUTIONS and _layout_matters(ctx.values.get(n.name))]
    if len(op_names(gm)) < 2 or not convs:
        return None

    def build(kept: list[str]):
        cut = set(convs) - set(kept)
        candidate = rebuild(gm, cut=cut, values=ctx.values)
        if not op_names(candidate):
            return None
        inputs = {p.name: p.meta.get("transform") for p in placeholders(candidate) if p.name in cut}
        return with_transforms(candidate, {name: with_step(t, ("channels_last",)) for name, t in inputs.items()})

    kept = ddmin(ev, convs, build, ctx.window)
    return build(kept) if len(kept) < len(convs) else None


def _layout_matters(value) -> bool:
    """A 4-d or 5-d tensor of more than one channel and pixel, not channels_last already."""
    if not isinstance(value, torch.Tensor) or value.dim() not in (4, 5) or value.shape[1] < 2:
        return False
    return value[0, 0].numel() > 1 and not value.is_contiguous(memory_format=channels_last_format(value.dim()))
