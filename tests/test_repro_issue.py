"""issue.md follows PyTorch's bug template: what fails, the repro inline, versions; short (under 3 KB)."""
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


def test_issue_follows_the_pytorch_template_and_stays_short(tmp_path):
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor",
                     message="out[0] (uint8): 100 of 100 elements differ from eager",
                     spec=CompileSpec(mode="max-autotune"),
                     injections=[Injection("neg", template="decltype({x})(2 * {x})", paths=("cpp",))],
                     source="model.py, graph 1 of 3")
    repro = write_repro(tmp_path / "out", neg_graph(), [torch.arange(100, dtype=torch.uint8)], info)
    metrics = [{"output": "out[0]", "dtype": "uint8", "shape": [100], "ok": False, "mismatch_fraction": 0.99,
                "max_abs_err": 154.0}]
    report = {"script": "/somewhere/model.py", "graph_count": 3, "failing_graph": 1, "stage": "inductor",
              "ops_before": 27, "ops_after": 1, "ops": ["neg"], "repro": str(repro), "verified": True,
              "verify_line": "REPRODUCED: out[0] (torch.uint8): differs from eager: 99 of 100 elements",
              "failure": {"kind": "accuracy", "rung": "values", "message": info.message, "metrics": metrics},
              "final_metrics": metrics,
              "graphs": [{"index": i, "nodes": 30 + i, "failing": i == 1} for i in range(3)]}
    blame = ["| what | finding | run | verdict |", "|---|---|---|---|"] + \
        [f"| lowering {i} | finding {i} | `{{}}` | pass |" for i in range(6)]
    text = write_issue(tmp_path / "out", report, blame).read_text()
    assert text.startswith("### 🐛 Describe the bug\n") and "\n### Versions\n" in text
    assert "## What fails" not in text and "<details>" not in text  # no sidecar, no full story
    assert repro.read_text().strip() in text  # the repro inline, verbatim
    assert f"Python {platform.python_version()}" in text and f"torch {torch.__version__}" in text
    assert "max_autotune" not in text and "mode='max-autotune'" in text and "planted on purpose" in text
    assert INPUTS_FILE in text  # 100 elements: the inputs travel in a file, which the issue asks to attach
    assert "REPRODUCED: out[0] (torch.uint8)" in text and "`neg`" in text
    assert "| lowering 1 |" in text and "| lowering 2 |" not in text and "(4 more in report.json)" in text
    assert len(text.encode()) < 3000, len(text.encode())
