"""Which stage, which intermediate, which kernel: localization inside one failing graph.

For the failing graph this gathers what a person would otherwise dig out by hand (the
seeds' manual workflow): the verdict of every compiler stage; for an accuracy failure the
error of every intermediate against eager (one compile with all of them exposed, see
minifier.localize.divergence), the first node(s) that diverge while everything they read agrees,
and the nodes that could not be observed with the observed nodes that bracket them; and
Inductor's generated code, with the kernel(s) that compute each node and the line of the
user's script each node came from.
"""
from __future__ import annotations

import operator
from typing import Callable

import torch.fx as fx

from compiler.stages import STAGES
from minifier.capture.process import GraphRecord
from minifier.capture.values import rows_by_replayed_name
from minifier.graph.edit import is_op, op_label, op_nodes, rebuild, sinks
from minifier.graph.nodes import diverges
from minifier.localize.divergence import exposed_nodes, find_divergence
from minifier.reduce.delta_core import shortest_failing_prefix
from minifier.workers.answer import Answer
from minifier.workers.ask import Asker
from minifier.workers.evaluate import Evaluator
from minifier.workers.judge import REPRODUCES

METRIC_KEYS = ("max_abs_err", "max_rel_err", "mismatch_fraction", "rmse_ratio", "max_ulp", "dtype", "shape")


def stage_verdicts(ev: Asker, gm: fx.GraphModule, tries: int = 1) -> dict[str, str]:
    """pass / fail / invalid of the whole graph at every stage, answered from the cache: the
    stage checks made them, and at Inductor the confirmation's `tries` runs (asking for one run
    would be another question, and a recompile of the whole graph)."""
    verdicts = {}
    for stage in STAGES:
        wire = ev.repeats(gm, tries)[0] if stage == "inductor" and tries > 1 else ev.outcomes([gm], stage=stage)[0]
        answer = Answer.from_wire(wire)
        verdicts[stage] = (answer.status or "?") + (f" ({answer.kind})" if answer.kind else "")
    return verdicts


def generated_kernels(ev: Asker, gm: fx.GraphModule) -> tuple[list[dict], str | None]:
    """Inductor's kernels for `gm` on its recorded inputs; (kernels, error). The divergence job
    generated them already if it ran on `gm`; else one worker job generates them (sent ahead
    once the bug was reduced: minifier.search.bugs)."""
    answer = Answer.from_wire(ev.kernels(gm))
    if answer.status != "ok":
        return [], answer.message or answer.kind or "no code"
    return answer.kernels, None


def origins_by_name(record: GraphRecord, gm: fx.GraphModule) -> dict[str, dict]:
    """nodes.json rows by the replayed graph's node names where they line up (minifier.capture.values.
    rows_by_replayed_name), else by their own."""
    return rows_by_replayed_name(record, gm) or {r["name"]: r for r in record.node_rows()}


def localize_graph(record: GraphRecord, gm: fx.GraphModule, values: dict, ev: Evaluator, *, kind: str,
                   stage: str, signature: str, tries: int = 1, whole: fx.GraphModule | None = None) -> dict:
    """Everything the report says about where in graph `record` (or in the piece `gm` of it,
    `whole` being the graph) the failure is."""
    origins = origins_by_name(record, whole if whole is not None else gm)
    kernels, kernel_error = generated_kernels(ev, gm)
    node_kernels: dict[str, list[str]] = {}
    for k in kernels:
        for name in k["nodes"]:
            node_kernels.setdefault(name, []).append(k["name"])
    bug_ev = ev.for_bug(stage, signature)  # no culprit: this is where it is looked for
    verdicts = stage_verdicts(bug_ev, gm, tries)
    observed = _observe(gm, values, bug_ev) if kind == "accuracy" else None
    metrics = observed["metrics"] if observed else {}
    roots = observed["roots"] if observed else []
    nodes = node_table(gm, metrics, roots, origins, node_kernels)
    by_name = {k["name"]: k for k in kernels}
    return {
        "graph": record.index, "part": record.part, "key": record.key, "stage": stage, "kind": kind,
        "inductor_bug": stage == "inductor", "stages": verdicts,
        "nodes": nodes,
        "first_divergent": [{**_row(nodes, r), "kernels": [by_name[k] for k in node_kernels.get(r, [])]}
                            for r in roots],
        "unobserved": observed["unobserved"] if observed else [],
        "bracket": observed["bracket"] if observed else None,
        "observation": observed["how"] if observed else None,
        "kernels": kernels, "kernel_error": kernel_error,
    }


def node_table(gm: fx.GraphModule, metrics: dict, roots: list[str], origins: dict, node_kernels: dict) -> list[dict]:
    """One row per node (inputs and ops, in graph order): what it reads, how far its value is
    from eager, where it came from, which kernels compute it. report.html draws these."""
    return [_node_row(n, metrics, roots, origins, node_kernels) for n in gm.graph.nodes if n.op != "output"]


def _row(nodes: list[dict], name: str) -> dict:
    return next(n for n in nodes if n["name"] == name)


def _node_row(node: fx.Node, metrics: dict, roots: list[str], origins: dict, node_kernels: dict) -> dict:
    m = metrics.get(node.name)
    if node.op == "placeholder":
        status = "input"
    elif m is None:
        status = "unobserved" if metrics else "unknown"
    else:
        status = "diverges" if diverges(m) else "ok"
    origin = origins.get(node.name) or {}
    return {"name": node.name, "op": op_label(node) if node.op != "placeholder" else "input",
            "inputs": [a.name for a in node.all_input_nodes], "status": status, "first_divergent": node.name in roots,
            "metrics": {k: m[k] for k in METRIC_KEYS if m and k in m}, "origin": origin.get("origin"),
            "module": origin.get("module"), "gradient_of": origin.get("gradient_of"),
            "kernels": node_kernels.get(node.name, [])}


def _observe(gm: fx.GraphModule, values: dict, ev: Evaluator) -> dict:
    """Per-node errors with every intermediate exposed; roots; brackets for what was not seen."""
    divergence = find_divergence(gm, ev, values)
    if divergence is None or not divergence.roots:
        return {"metrics": {}, "roots": [], "unobserved": [], "bracket": _prefix_bracket(gm, ev),
                "how": "exposing every intermediate as an output hides the failure (it needs the graph's own "
                       "fusion), so it was bracketed by the shortest failing prefix of the graph instead"}
    bad = {n for n, m in divergence.metrics.items() if diverges(m)}
    tensors = set(exposed_nodes(gm, values))
    unobserved = [_bracket(node, set(divergence.metrics), bad, node.name in tensors) for node in op_nodes(gm)
                  if node.name not in divergence.metrics and node.target is not operator.getitem]
    return {"metrics": divergence.metrics, "roots": divergence.roots, "unobserved": unobserved, "bracket": None,
            "how": OBSERVATION[divergence.how]}


OBSERVATION = {
    "stored": "the values Inductor stores (each kernel's results, with the graph's own kernels), then every node "
              "inside the first kernel whose result diverges, on that piece alone fed with eager values; "
              "each judged against eager by the oracle",
    "every": "one compile with every intermediate exposed as an output, each judged against eager by the oracle "
             "(in that compile each value has a buffer of its own, so fusion differs from the original graph's)",
}


def _bracket(node: fx.Node, observed: set[str], bad: set[str], tensor: bool = False) -> dict:
    """The nearest observed values before and after an unobserved node, and whether they agree."""
    before = _nearest(node, lambda n: n.all_input_nodes, observed)
    after = _nearest(node, lambda n: list(n.users), observed)
    return {"node": node.name, "op": op_label(node),
            "why": "computed inside a kernel, whose other values were observed; its own value is never stored"
            if tensor else "its value is not a tensor (e.g. a tuple or a size), so it cannot be compared",
            "after_ok": [n for n in before if n not in bad], "after_diverging": [n for n in before if n in bad],
            "before_ok": [n for n in after if n not in bad], "before_diverging": [n for n in after if n in bad]}


def _nearest(node: fx.Node, step: Callable, observed: set[str]) -> list[str]:
    found, frontier, seen = [], list(step(node)), set()
    while frontier:
        n = frontier.pop(0)
        if n.name in seen or n.op == "output":
            continue
        seen.add(n.name)
        if n.name in observed or n.op == "placeholder":
            found.append(n.name)
        else:
            frontier.extend(step(n))
    return found


def _prefix_bracket(gm: fx.GraphModule, ev: Evaluator) -> dict | None:
    """Binary search for the shortest prefix of ops that still fails: the failure starts
    after the last op of the longest passing prefix and at or before the prefix's last op."""
    ops = op_nodes(gm)
    if len(ops) < 2:
        return None
    fails = lambda points: 0 if ev.test(rebuild(gm, outputs=sinks(gm, points[0]))) == REPRODUCES else None
    hi = shortest_failing_prefix(0, len(ops) - 1, fails)
    return {"fails_with_ops_up_to": ops[hi].name, "passes_with_ops_up_to": ops[hi - 1].name if hi else None,
            "prefix_ops": hi + 1, "of": len(ops)}


def kernels_of_graph(ev: Asker, gm: fx.GraphModule) -> list[dict]:
    """The kernels of a (small, minimized) graph with their sources, for the report."""
    kernels, _ = generated_kernels(ev, gm)
    ops = {n.name for n in gm.graph.nodes if is_op(n)}
    return [k for k in kernels if set(k["nodes"]) & ops] or kernels


def localize_bugs(record: GraphRecord, gm: fx.GraphModule, values: dict, ev: Evaluator, bugs: list,
                  whole: fx.GraphModule | None = None, say: Callable[[str], None] = lambda s: None) -> dict | None:
    """Localize graph `record` for its first bug, and note the kernels of each bug's repro.
    `gm` is where the first bug was found: the whole graph `whole`, or the piece of it that
    fails alone (minifier.localize.pieces). Localization only adds to the report: an error
    here is noted, never fatal."""
    if not bugs:
        return None
    first = bugs[0]
    say(f"graph {record.index}: localizing ({first.kind} at {first.stage})")
    try:
        loc = localize_graph(record, gm, values, ev, kind=first.kind, stage=first.stage, signature=first.signature,
                             tries=first.tries, whole=whole)
    except Exception as exc:  # noqa: BLE001 - the reduction's results must survive a reporting problem
        return {"graph": record.index, "part": record.part, "key": record.key, "error": f"{type(exc).__name__}: {exc}",
                "bugs": []}
    loc["bugs"] = [{"culprit": b.culprit, "kernels": _safe_kernels(ev, b.small)} for b in bugs]
    if first.notes.get("piece"):
        loc["piece"] = first.notes["piece"]  # nodes, stages and kernels are the piece's
    return loc


def _safe_kernels(ev: Asker, gm) -> list[dict]:
    if gm is None:
        return []
    try:
        return kernels_of_graph(ev, gm)
    except Exception:  # noqa: BLE001
        return []


def annotate_rows(bugs: list, rows: list[dict], localized: list[dict]) -> None:
    """Add to each bug's report row its first divergent node(s) with their kernels, and the
    kernels of its minimized repro."""
    seen: dict[int, int] = {}
    for bug, row in zip(bugs, rows):
        loc = next((l for l in localized if l and l["graph"] == bug.graph), None)
        if loc is None:
            continue
        n = seen[bug.graph] = seen.get(bug.graph, -1) + 1
        row["part"] = loc["part"]
        if n < len(loc["bugs"]):
            row["kernels"] = loc["bugs"][n]["kernels"]
        if n == 0 and loc.get("first_divergent"):
            row["first_divergent_nodes"] = loc["first_divergent"]


def add_stage_verdicts(graph_rows: list[dict], localized: list[dict]) -> None:
    for loc in localized:
        if loc and "stages" in loc:
            row = next((r for r in graph_rows if r["index"] == loc["graph"]), None)
            if row is not None:
                row["stages"] = loc["stages"]


def for_json(loc: dict) -> dict:
    """What report.json keeps: everything but the sources of kernels no divergent node needs
    (report.html and work/ keep them all)."""
    kernels = [{k: v for k, v in kernel.items() if k != "source"} for kernel in loc.get("kernels", [])]
    return {**loc, "kernels": kernels}
