"""Where an accuracy failure starts: the nodes whose compiled value diverges from eager while
every value they read still agrees. Each such root is a distinct bug.

One compile answers it for the whole graph: every intermediate becomes an output and the
oracle judges each one. Fusion changes when everything is an output, so a bug that needs a
fused kernel may not show there; then there are no roots and reduction works without them.
"""
from __future__ import annotations

import operator
import re
from dataclasses import dataclass

import torch
import torch.fx as fx

from minifier.evaluate import REPRODUCES, Evaluator
from minifier.graph_edit import op_nodes, rebuild


@dataclass
class Divergence:
    roots: list[str]  # nodes in graph order
    metrics: dict  # node name -> oracle metrics of its value
    exposed: list[str]  # nodes that could be observed


def exposed_nodes(gm: fx.GraphModule, values: dict) -> list[str]:
    return [n.name for n in op_nodes(gm) if isinstance(values.get(n.name), torch.Tensor)]


def find_divergence(gm: fx.GraphModule, ev: Evaluator, values: dict) -> Divergence | None:
    exposed = exposed_nodes(gm, values)
    if not exposed:
        return None
    candidate = rebuild(gm, outputs=exposed)
    answer = ev.outcomes([candidate])[0]
    if answer.get("status") != "fail" or answer.get("kind") != "accuracy":
        return None
    metrics = {exposed[i]: m for m in answer.get("metrics", []) if (i := _index(m["output"])) is not None}
    bad = {name for name, m in metrics.items() if not m.get("ok")}
    by_name = {n.name: n for n in gm.graph.nodes}
    roots = [name for name in exposed if name in bad and not (_operands(by_name[name]) & bad)]
    return Divergence(roots, metrics, exposed)


def _operands(node: fx.Node) -> set[str]:
    """Names of the ops a node reads, looking through getitem."""
    names = set()
    for arg in node.all_input_nodes:
        if arg.target is operator.getitem:
            names |= _operands(arg)
        names.add(arg.name)
    return names


def _index(path: str) -> int | None:
    """Which exposed value an oracle path names: `out[3]`, or `out['out'][3]` when the graph
    also writes to its inputs (BatchNorm's running stats in training; those are not ours)."""
    match = re.fullmatch(r"out(?:\['out'\])?\[(\d+)\]", path)
    return int(match.group(1)) if match else None
