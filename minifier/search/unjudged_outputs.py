"""A large graph's outputs whose strides or zero signs were wrong, searched on their own once
its other bugs were found in pieces.

Pieces are judged without those rungs (minifier.localize.pieces.for_pieces): a piece returns
values that only the rest of the graph reads, whose strides no user sees. A graph's own
output is what the user sees, though: the cat of an empty KV cache in transformers' Llama and
GPT-2 returns other strides than eager's. Beside a planted accuracy bug, the pieces never saw
that real bug, and it was lost. The script's run judged every output of the whole
graph on every rung; the outputs it found wrong only at such a rung are rebuilt as a graph of
their own (the ops that compute them) and searched as any graph is, by the whole oracle.
"""
from __future__ import annotations

import torch.fx as fx

from compiler.signature import rung_of
from minifier.graph.edit import op_names, rebuild
from minifier.localize.pieces import INTERNAL_RUNGS
from minifier.search.bugs import Bug, BugSearch, bugs_in_graph
from minifier.workers.answer import Answer
from minifier.workers.evaluate import Evaluator


def unjudged_outputs(gm: fx.GraphModule, failure: dict) -> list[str]:
    """Names of `gm`'s outputs that the script's run found wrong at a rung pieces do not judge
    (and at no other: a wrong value is the bug the pieces found)."""
    returned = next(iter(gm.graph.find_nodes(op="output"))).args[0]
    outputs = returned if isinstance(returned, (tuple, list)) else (returned,)
    names = []
    for metric in failure.get("metrics") or []:
        index = _index(metric.get("output", ""))
        if metric.get("ok") is False and metric.get("rung") in INTERNAL_RUNGS and index is not None \
                and index < len(outputs) and isinstance(outputs[index], fx.Node):
            names.append(outputs[index].name)
    return list(dict.fromkeys(names))


def _index(label: str) -> int | None:
    """`out[3]` -> 3."""
    if label.startswith("out[") and label.endswith("]") and label[4:-1].isdigit():
        return int(label[4:-1])
    return None


def bugs_at_unjudged_outputs(index: int, gm: fx.GraphModule, values: dict, ev: Evaluator, failure: dict,
                             search: BugSearch) -> list[Bug]:
    """The bugs of the outputs `unjudged_outputs` names, from the graph that computes only them
    (`ev`: the graph's evaluator, judging every rung); none when the script's run saw none, or
    they pass alone."""
    names = unjudged_outputs(gm, failure)
    if not names:
        return []
    alone = rebuild(gm, outputs=names)
    if not op_names(alone):
        return []
    answer = Answer.from_wire(ev.for_bug("inductor", failure["signature"]).outcomes([alone])[0])
    if not answer.failed or rung_of(answer.signature or "") not in INTERNAL_RUNGS:
        return []
    search.say(f"graph {index}: the script's run saw the strides or zero signs of {', '.join(names)} "
               f"differ; searching those outputs alone")
    bugs, _ = bugs_in_graph(index, alone, values, ev, answer.signature, search)
    for bug in bugs:
        bug.ops_before = len(op_names(gm))
        bug.notes["replay"] = (f"outputs {', '.join(names)} alone: the script's run saw them differ (strides or "
                               f"zero signs, which pieces do not judge) beside the bug found in pieces")
    return bugs
