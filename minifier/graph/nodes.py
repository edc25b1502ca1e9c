"""Which graph nodes a divergence search looks at, and which of them are roots.

Pure functions of a graph, its recorded values and the kernel map: the minify process uses
them to read a worker's answer (minifier.localize.divergence), and the worker to choose what
to expose (minifier.workers.divergence_worker).
"""
from __future__ import annotations

import operator
import re

import torch
import torch.fx as fx

from compiler.custom_ops import op_schema
from compiler.kernels import Kernel, kernel_node_names
from minifier.graph.edit import NON_OPS, op_nodes, output_nodes, rebuild
from repro.value_store import nbytes


def exposed_nodes(gm: fx.GraphModule, values: dict) -> list[str]:
    """The nodes whose values can be observed: tensors, except those a later op writes in place
    (exposed, such a value is the buffer after that write, on both sides: the producer of a
    residual sum that `relu(x, inplace=True)` overwrites would be named for the relu's bug)."""
    later = overwritten_in_place(gm)
    return [n.name for n in op_nodes(gm) if isinstance(values.get(n.name), torch.Tensor) and n.name not in later]


IN_PLACE_OPERATORS = {operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
                      operator.imod, operator.ipow, operator.iand, operator.ior, operator.ixor,
                      operator.ilshift, operator.irshift, operator.imatmul}


def overwritten_in_place(gm: fx.GraphModule) -> set[str]:
    """Nodes whose value a later node writes in place (`inplace=True`, `x.add_(y)`, `x += y`,
    `torch.relu_`, an ATen op whose schema writes an argument), and through a chain of such
    writes (each returns the buffer it wrote) the nodes those alias."""
    writes = {n: _written(n) for n in gm.graph.nodes}
    found: set[str] = set()
    for node, targets in writes.items():
        stack = list(targets)
        while stack:
            target = stack.pop()
            if target.name not in found:
                found.add(target.name)
                stack.extend(writes.get(target, ()))
    return found


def _written(node: fx.Node) -> list[fx.Node]:
    """The nodes `node` writes to in place."""
    first = node.args[0] if node.args and isinstance(node.args[0], fx.Node) else None
    if node.op == "call_method":
        name = str(node.target)
        return [first] if first is not None and name.endswith("_") and not name.endswith("__") \
            and name != "requires_grad_" else []
    if node.op != "call_function":
        return []
    schema = op_schema(node.target)
    if schema is not None:
        return [a for a, arg in zip(node.args, schema.arguments)
                if isinstance(a, fx.Node) and arg.alias_info is not None and arg.alias_info.is_write]
    name = getattr(node.target, "__name__", "")
    in_place = node.kwargs.get("inplace") is True or node.target in IN_PLACE_OPERATORS \
        or (name.endswith("_") and not name.startswith("_") and getattr(node.target, "__module__", "") == "torch")
    return [first] if in_place and first is not None else []


def judged(answer: dict, outputs: list[str]) -> dict | None:
    """Oracle metrics by node name, from the answer for a graph whose outputs are `outputs`;
    None unless the answer is an accuracy failure."""
    if answer.get("status") != "fail" or answer.get("kind") != "accuracy":
        return None
    return _by_output(answer, outputs)


def observed(answer: dict, outputs: list[str]) -> dict | None:
    """Oracle metrics by node name of a check that ran to the end (passed, or failed on
    accuracy), from its answer for a graph whose outputs are `outputs`; None otherwise."""
    if answer.get("status") == "pass":
        return _by_output(answer, outputs) or None
    return judged(answer, outputs)


def output_names(gm: fx.GraphModule) -> list[str]:
    return [n.name for n in output_nodes(gm)]


def judged_in_chunks(run, names: list[str], values: dict, budget: int) -> dict | None:
    """judged() of `names` exposed a memory budget's worth at a time (a chunk's exposed values
    are held by eager, the compiled run and the fp64 reference at once): `run(chunk)` answers for
    the graph whose outputs are `chunk`. Metrics of every chunk, the passing ones' too, once any
    chunk has a wrong value; None if none has, or a chunk failed otherwise. Small graphs are one
    chunk, as before."""
    metrics, wrong = {}, False
    for chunk in chunks_within(names, values, budget):
        answer = run(chunk)
        seen = observed(answer, chunk)
        if seen is None:
            return None
        metrics.update(seen)
        wrong = wrong or answer.get("status") == "fail"
    return metrics if wrong else None


def chunks_within(names: list[str], values: dict, budget: int) -> list[list[str]]:
    """`names` in order, cut where a chunk's recorded values would pass `budget` bytes."""
    chunks, size = [[]], 0
    for name in names:
        weight = nbytes(values.get(name))
        if chunks[-1] and size + weight > budget:
            chunks.append([])
            size = 0
        chunks[-1].append(name)
        size += weight
    return [c for c in chunks if c]


def _by_output(answer: dict, outputs: list[str]) -> dict:
    """The answer's metrics by the name of the output each judged."""
    return {outputs[i]: m for m in answer.get("metrics", []) if (i := output_index(m["output"])) is not None}


def diverges(m: dict) -> bool:
    """An observed value is wrong: not only laid out otherwise (an intermediate made an output so
    as to see it keeps the strides Inductor chose for it; an accuracy bug starts where values do)."""
    return not m.get("ok") and m.get("rung") != "layout"


def roots(gm: fx.GraphModule, metrics: dict) -> list[str]:
    """Observed nodes that diverge while the nearest observed values they read all agree."""
    bad = {name for name, m in metrics.items() if diverges(m)}
    return [n.name for n in gm.graph.nodes if n.name in bad and not (nearest_observed(n, metrics) & bad)]


def nearest_observed(node: fx.Node, observed) -> set[str]:
    """The observed values `node` reads, looking through the unobserved nodes in between."""
    return {n.name for n in _walk_up(node, observed) if n.name in observed}


def region(node: fx.Node, observed) -> list[fx.Node]:
    """`node` and the unobserved nodes it reads through, up to observed values and inputs."""
    return [node] + [n for n in _walk_up(node, observed) if n.name not in observed and n.op != "placeholder"]


def _walk_up(node: fx.Node, observed) -> list[fx.Node]:
    seen, frontier, found = set(), list(node.all_input_nodes), []
    while frontier:
        n = frontier.pop(0)
        if n in seen:
            continue
        seen.add(n)
        found.append(n)
        if n.name not in observed and n.op != "placeholder":
            frontier.extend(n.all_input_nodes)
    return found


def stored_nodes(gm: fx.GraphModule, exposed: list[str], node_kernels: dict[str, set], in_place: set) -> list[str]:
    """The exposed nodes whose values Inductor stores anyway: computed by some kernel and read
    by another kernel (or returned). Left out: a value read by a kernel that writes in place
    (an addmm output that the next pointwise kernel overwrites; a residual sum that the last
    kernel of an add chain overwrites, while another kernel reads it too), and values no
    kernel computes (views): exposing either would change the kernels, each a new build."""
    outputs = {n.name for n in output_nodes(gm)}
    chosen = []
    for node in op_nodes(gm):
        mine = node_kernels.get(node.name, set())
        if node.name not in exposed or not mine:
            continue
        if node.name in outputs:
            chosen.append(node.name)
            continue
        readers = _readers(node)
        elsewhere = set().union(*(node_kernels.get(r.name, set()) - mine for r in readers)) if readers else set()
        if elsewhere and not elsewhere & in_place:
            chosen.append(node.name)
    return chosen


def node_kernel_map(gm: fx.GraphModule, kernels: list[Kernel]) -> tuple[dict[str, set], set[str], set[str]]:
    """Which kernels compute each node of `gm` (by `gm`'s names), and the names of the kernels
    that write in place and of the extern ones."""
    ours = kernel_node_names(gm, kernels)
    node_kernels: dict[str, set] = {}
    for kernel in kernels:
        for name in kernel.nodes:
            if name in ours:
                node_kernels.setdefault(ours[name], set()).add(kernel.name)
    return node_kernels, {k.name for k in kernels if k.in_place}, {k.name for k in kernels if k.kind == "extern"}


def stored_outputs(gm: fx.GraphModule, values: dict, kernels: list[dict], budget: int) -> list[str]:
    """The values Inductor stores anyway (`stored_nodes`, from the kernel map the script's
    compile recorded) that `gm` does not return: outputs a check of `gm` can add without a
    kernel changing. None of them past `budget` bytes of recorded values, or when `gm`'s
    outputs are not a flat tuple of nodes (the added ones must come after them, by position)."""
    out = next(iter(gm.graph.find_nodes(op="output"))).args[0]
    if not isinstance(out, (tuple, list)) or not all(isinstance(a, fx.Node) for a in out):
        return []
    node_kernels, in_place, _ = node_kernel_map(gm, [Kernel(**k) for k in kernels])
    returned = set(output_names(gm))
    extra = [n for n in stored_nodes(gm, exposed_nodes(gm, values), node_kernels, in_place) if n not in returned]
    return extra if sum(nbytes(values.get(n)) for n in extra) <= budget else []


def inside_of(gm: fx.GraphModule, found: list[str], observed, exposed: list[str], values: dict):
    """The graph of every node between the roots `found` and the agreeing values before them,
    fed with those values' eager records, with all its values as outputs; (graph, outputs),
    or None when the roots read nothing unobserved."""
    inside = region_names(gm, found, observed)
    return None if len(inside) == len(found) else _piece(gm, inside, exposed, values)


def leading_in(gm: fx.GraphModule, found: list[str], observed, exposed: list[str], values: dict):
    """inside_of without the roots themselves: the unobserved nodes they read through, alone;
    None when none of those can be observed."""
    before = region_names(gm, found, observed) - set(found)
    return _piece(gm, before, exposed, values) if any(n in before for n in exposed) else None


def region_names(gm: fx.GraphModule, found: list[str], observed) -> set[str]:
    """The roots `found` and the unobserved nodes they read through (`region` of each)."""
    by_name = {n.name: n for n in gm.graph.nodes}
    return {n.name for root in found for n in region(by_name[root], observed)}


def _piece(gm: fx.GraphModule, inside: set[str], exposed: list[str], values: dict):
    """The nodes `inside` alone, fed with the recorded values of what they read, with their
    observable values as outputs: (graph, outputs)."""
    by_name = {n.name: n for n in gm.graph.nodes}
    frontier = {a.name for name in inside for a in by_name[name].all_input_nodes
                if a.name not in inside and a.op != "placeholder"}
    outputs = [n for n in exposed if n in inside]
    return rebuild(gm, cut=frontier, outputs=outputs, values=values), outputs


def _readers(node: fx.Node) -> list[fx.Node]:
    """The ops that read `node`'s value (through getitem)."""
    readers = []
    for user in node.users:
        if user.op == "output":
            continue
        readers.extend(_readers(user) if user.target in NON_OPS else [user])
    return readers


def own_metrics(metrics: list, count: int) -> list:
    """The metrics of a graph's first `count` outputs (and of anything that is no output by
    position: inputs it writes to, gradients), from a check of the graph that also returned
    further values after them."""
    return [m for m in metrics if (output_index(m.get("output", "")) or 0) < count]


def output_index(path: str) -> int | None:
    """Which exposed value an oracle path names: `out[3]`, or `out['out'][3]` when the graph
    also writes to its inputs (BatchNorm's running stats in training; those are not ours)."""
    match = re.fullmatch(r"out(?:\['out'\])?\[(\d+)\]", path)
    return int(match.group(1)) if match else None

