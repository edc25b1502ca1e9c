"""How small a candidate is. Progress means a smaller score, compared in this order:

op nodes, then total input elements, then inputs, then total input rank, then how far input
values are from simple (strided, real values vs small ints, ones, zeros). A candidate that only
moves things around (or adds inputs without removing anything) is never progress.
"""
from __future__ import annotations

import torch
import torch.fx as fx

from minifier.graph.edit import op_nodes, placeholders
from minifier.graph.input_transforms import meta_of, value_cost


def input_metas(gm: fx.GraphModule, values: dict) -> list:
    """What each input looks like once transformed (meta tensors, or the plain value)."""
    return [meta_of(values.get(p.meta.get("value", p.name)), p.meta.get("transform")) for p in placeholders(gm)]


def score(gm: fx.GraphModule, values: dict) -> tuple[int, int, int, int, int]:
    metas = input_metas(gm, values)
    tensors = [(m, p) for m, p in zip(metas, placeholders(gm)) if isinstance(m, torch.Tensor)]
    numel = sum(m.numel() for m, _ in tensors)
    rank = sum(m.dim() for m, _ in tensors)
    plainness = sum((0 if m.is_contiguous() else 1) + value_cost(p.meta.get("transform")) for m, p in tensors)
    return len(op_nodes(gm)), numel, len(metas), rank, plainness
