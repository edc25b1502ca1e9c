"""The nodes of the kernel a confirmed failure ran in, where its replays named one: where the
reduction cuts first (minifier/reduce/passes/cut_after_culprit.py).

A device-side assert's check names them itself (compiler/device_asserts.py: it waits for each
kernel and has its compile's kernel map). A crash or a hang names only the kernel, read from
the dead or killed worker's marks file or fault-handler stacks (compiler/crash_trace.py); its
nodes come from the graph's kernel map, code generated without building or running it (the
same names: the same graph and config), the very answer localization asks for later. A kernel
map names nodes as Dynamo named them (compiler.kernels.kernel_node_names maps them to the
graph's own)."""
from __future__ import annotations

import torch.fx as fx

from compiler.kernels import Kernel, kernel_node_names, nodes_of
from minifier.workers.answer import Answer
from minifier.workers.evaluate import Evaluator


def failing_kernel_nodes(answers: list[Answer], ev: Evaluator, gm: fx.GraphModule) -> list[str]:
    same = [a for a in answers if a.signature == ev.signature]
    named = next((a.kernel_nodes for a in same if a.kernel_nodes), [])
    crashed = next((a.died_in_kernel for a in same if a.died_in_kernel), None)
    if not named and crashed is not None and ev.stage == "inductor":
        named = nodes_of([crashed], Answer.from_wire(ev.kernels(gm)).kernels or [])
    to_graph = kernel_node_names(gm, [Kernel("", "", named)])  # Dynamo's names for them, as `gm` names them
    return [to_graph.get(n, n) for n in named]
