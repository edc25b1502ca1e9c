"""What a bug found in a graph masks before the next bug is looked for: its nodes become inputs
fed their recorded eager values (minifier.search.bugs), so no reduction slips from one bug to
another; and the questions about the masked graph, asked before they are needed."""
from __future__ import annotations

from typing import Callable

import torch
import torch.fx as fx

from minifier.graph.edit import op_label, op_names, op_nodes, output_nodes, rebuild
from minifier.workers.ask import Question
from minifier.workers.evaluate import Evaluator


def known_ops(gm: fx.GraphModule, values: dict, known: dict, signature: str) -> dict:
    """The nodes of `gm` (fed recorded values) whose op is the first divergent node's of a known
    Inductor accuracy bug, each with that bug: a model repeats its layers, and T5's eight pieces
    each confirmed, located and masked its planted `mean` bug again, a few compiles a piece. None
    unless `gm`'s own failure (`signature`) is wrong values too: a compile error in that op
    would be another bug, and would pass once the op is masked."""
    if not signature.startswith("accuracy@"):
        return {}
    return {name: bug for (key, label), bug in known.items() if label and key == "accuracy@inductor"
            for name in same_op(gm, label, values)}


def same_op(gm: fx.GraphModule, label: str, values: dict) -> set[str]:
    """The nodes of `gm` that call the op `label` names and can be fed recorded values."""
    return {n.name for n in op_nodes(gm) if op_label(n) == label and isinstance(values.get(n.name), torch.Tensor)}


def masked_after(gm: fx.GraphModule, small: fx.GraphModule, values: dict, same_label: set[str]) -> set[str]:
    """What a reduced bug masks in `gm` before the next search: its repro's ops (those that can be
    fed: not a tuple), and the nodes of its culprit's op (`same_label`). A bug with no culprit (a
    crash, an error, an assert) masks every node of each op its repro returns (the failing one:
    the reduction cuts after it): that op's lowering fails in each layer of a model, and the next
    layer's failure would hide any other bug as the same."""
    own = {n.name for n in op_nodes(small) if n.name in values}
    if same_label:
        return own | same_label
    return own.union(*(same_op(gm, label, values) for label in returned_ops(small)))


def returned_ops(gm: fx.GraphModule) -> set[str]:
    """The op labels of the nodes `gm` returns."""
    return {op_label(n) for n in output_nodes(gm) if n.op in ("call_function", "call_method", "call_module")}


def ask_masked_at_one_op(gm: fx.GraphModule, masked: set[str], values: dict, ev: Evaluator,
                         outputs: list[str] | None, first: bool) -> Callable[[fx.GraphModule], None]:
    """For a bug with no culprit node (a crash, an error, an assert): once its reduction keeps one
    op, the graph's next question is known (does it still fail with that op fed its recorded
    value?), and is asked beside the rest of the reduction (shapes, values), with the whole
    graph's kernels that localization asks of the `first` bug."""
    def ask(small: fx.GraphModule) -> None:
        ask_masked_early(gm, masked | masked_after(gm, small, values, set()), values, ev, outputs)
        if first:
            ev.kernels_ahead([gm])
    return ask


def ask_masked_early(gm: fx.GraphModule, masked: set[str], values: dict, ev: Evaluator,
                     outputs: list[str] | None = None) -> None:
    """Most accuracy bugs reduce to their first divergent node alone, and the question after
    the reduction is whether the graph still fails with that node fed its eager value: asked
    now, it runs beside the reduction (on another bug's ops it is one wasted check)."""
    try:
        after = rebuild(gm, cut=masked, values=values, outputs=outputs)
    except ValueError:  # no recorded value to feed it
        return
    if op_names(after):
        ev.prefetch([Question(after, "inductor")])
