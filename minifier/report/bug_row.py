"""One bug's row of report.json, from what the search found."""
from __future__ import annotations

from typing import TYPE_CHECKING

from compiler.signature import rung_of
from minifier.graph.edit import op_label, op_nodes

if TYPE_CHECKING:
    from minifier.search.bugs import Bug


def bug_row(bug: Bug) -> dict:
    """report.json's row of one bug found (before its repro is written and verified)."""
    row = {"failing_graph": bug.graph, "also_in_graphs": bug.also_in, "stage": bug.stage,
           "inductor_bug": bug.stage == "inductor",
           "failure": {"kind": bug.kind, "rung": rung_of(bug.signature), "signature": bug.signature,
                       "message": bug.message,
                       "stage": bug.stage, "culprit": bug.culprit, "metrics": bug.culprit_metrics},
           "reproduced": f"{bug.reproduced}/{bug.tries}", "flaky": bug.flaky, "ops_before": bug.ops_before,
           "first_divergent": bug.culprit, "divergent_roots": bug.divergent_roots}
    if bug.notes.get("kernel_nodes"):  # the nodes of the kernel a crash or device assert ran in
        row["failure"]["kernel_nodes"] = bug.notes["kernel_nodes"]
    if bug.notes.get("replay"):
        row["replay"] = bug.notes["replay"]
    if bug.notes.get("cudagraphs"):  # the rung without CUDA graphs (search/bugs.py: cudagraphs_rung)
        row["cudagraphs"] = bug.notes["cudagraphs"]
    if bug.small is not None:
        row.update(ops_after=len(op_nodes(bug.small)), ops=[op_label(n) for n in op_nodes(bug.small)],
                   passes=bug.notes.get("passes", {}))  # per pass: runs, compiles, successes
    return row
