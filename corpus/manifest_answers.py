"""What check_manifest.py saw of one corpus case (`Checked`), and how it is held against the
manifest's answer (`compare`): kept apart from the runner, which imports torch and runs the cases."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Checked:
    name: str
    graphs: int | None = None
    failing: list[int] = field(default_factory=list)
    kind: str | None = None
    message: str = ""
    fx_nodes: int | None = None
    stages: dict = field(default_factory=dict)  # stage -> pass/fail on the failing graph
    backward_differs: bool | None = None
    clean_failing: list[int] | None = None
    clean_backward_differs: bool | None = None
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


def compare(case: dict, got: Checked) -> list[str]:
    """What differs between the manifest's answer and what the run showed."""
    problems = []
    if got.graphs != case["graphs"]:
        problems.append(f"graphs {got.graphs} != {case['graphs']}")
    if case["kind"] == "none":
        if got.failing:
            problems.append(f"graphs {got.failing} fail ({got.kind}: {got.message[:200]}), expected nothing to fail")
        return problems
    if got.fx_nodes != case["fx_nodes"]:
        problems.append(f"fx_nodes {got.fx_nodes} != {case['fx_nodes']}")
    if "backward" in case.get("tags", []):
        if got.failing:
            problems.append(f"forward graphs {got.failing} fail ({got.message[:200]}), but the bug should be "
                            "backward-only")
        if not got.backward_differs:
            problems.append("with the bug, results match eager")
        if got.clean_backward_differs:
            problems.append("without the bug, results differ from eager")
    else:
        if not got.failing or got.failing[0] != case["graph_index"]:
            problems.append(f"failing graphs {got.failing}, expected {case['graph_index']} first")
        if got.kind != case["kind"]:
            problems.append(f"kind {got.kind} != {case['kind']} ({got.message[:200]})")
        if got.stages:
            want = {"aot_eager": "pass",
                    "aot_eager_decomp_partition": "fail" if case["stage"] == "aot_eager_decomp_partition" else "pass"}
            if got.stages != want:
                problems.append(f"stage answers {got.stages}, expected {want}")
    if got.clean_failing:
        problems.append(f"without the bug graphs {got.clean_failing} still fail")
    return problems
