"""issue.md carries what a maintainer needs: what fails, environment, the repro, metrics, localization."""
import platform

import torch
import torch.fx as fx

from compiler.inject import Injection
from compiler.stages import CompileSpec
from repro.issue_text import write_issue
from repro.writer import INPUTS_FILE, ReproInfo, write_repro


def neg_graph():
    gm = fx.symbolic_trace(type("Neg", (torch.nn.Module,), {"forward": lambda self, level: (torch.neg(level),)})())
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm


def test_issue_has_every_section(tmp_path):
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor",
                     message="out[0] (uint8) differs from eager: max_abs_err=154",
                     spec=CompileSpec(mode="max-autotune"),
                     injections=[Injection("neg", template="decltype({x})(2 * {x})", paths=("cpp",))],
                     source="model.py, graph 1 of 3")
    repro = write_repro(tmp_path / "out", neg_graph(), [torch.arange(100, dtype=torch.uint8)], info)
    metrics = [{"output": "out[0]", "dtype": "uint8", "shape": [100], "ok": False, "mismatch_fraction": 0.99,
                "max_abs_err": 154.0}]
    report = {"script": "/somewhere/model.py", "graph_count": 3, "failing_graph": 1, "stage": "inductor",
              "ops_before": 27, "ops_after": 1, "ops": ["neg"], "repro": str(repro), "verified": True,
              "verify_line": "REPRODUCED: accuracy: out[0] (uint8) differs from eager",
              "failure": {"kind": "accuracy", "message": info.message, "metrics": metrics},
              "final_metrics": metrics,
              "graphs": [{"index": i, "nodes": 30 + i, "failing": i == 1, "kind": "accuracy" if i == 1 else None,
                          "message": info.message if i == 1 else None} for i in range(3)],
              "bugs": [{}, {"failing_graph": 2, "stage": "aot_eager", "failure": {"kind": "runtime_error",
                                                                                  "message": "boom"}}]}
    text = write_issue(tmp_path / "out", report).read_text()
    for heading in ("## What fails", "## Environment", "## Repro", "## Observed vs expected", "## Localization"):
        assert heading in text
    assert repro.read_text().strip() in text  # the repro inline, verbatim
    assert f"Python {platform.python_version()}" in text and f"torch {torch.__version__}" in text
    assert "'mode': 'max-autotune'" in text and "planted on purpose" in text
    assert INPUTS_FILE in text  # 100 elements: the inputs travel in a file, which the issue asks to attach
    assert "| out[0] | uint8 | [100] | 154 | 0.99 | False |" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and line.split("|")[1].strip().isdigit()]
    assert [line.split("|")[3].strip() for line in rows[:3]] == ["no", "yes", "no"]
    assert "| 2 | aot_eager | runtime_error | boom |" in text
    assert text.count("<details>") == 1 and "def check(" in text  # the oracle sidecar, folded
