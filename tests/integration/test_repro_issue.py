"""issue.md follows PyTorch's bug template: a suggested title, what happens, the repro inline with
its output and the real error text, the blame in words, collect_env under Versions; the body short
(under 3.5 KB), and no file to attach where the inputs can be written inline."""
import platform

import pytest
import torch
import torch.fx as fx

from compiler.inject import Injection
from compiler.stages import CompileSetup, CompileSpec
from repro.issue_text import write_issue
from repro.writer import INPUTS_FILE, ReproInfo, write_repro


def neg_graph():
    gm = fx.symbolic_trace(type("Neg", (torch.nn.Module,), {"forward": lambda self, level: (torch.neg(level),)})())
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm


@pytest.mark.slow
def test_issue_follows_the_pytorch_template_and_stays_short(tmp_path):
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor",
                     message="out[0] (uint8): 100 of 100 elements differ from eager",
                     setup=CompileSetup(CompileSpec(mode="max-autotune"), [Injection("neg", template="decltype({x})(2 * {x})", paths=("cpp",)).to_dict()]),
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
    blame = [f"- **lowering {i}**: finding {i}" for i in range(6)]
    text = write_issue(tmp_path / "out", report, blame).read_text()
    assert text.startswith("Title: [inductor] torch.compile gives results that differ from eager for neg\n")
    assert "\n### 🐛 Describe the bug\n" in text and "\n### Versions\n" in text
    assert "## What fails" not in text and "<details>" not in text  # no sidecar, no full story
    assert repro.read_text().strip() in text  # the repro inline, verbatim
    assert f"Python version: {platform.python_version()}" in text  # python -m torch.utils.collect_env
    assert f"PyTorch version: {torch.__version__}" in text
    assert "max_autotune" not in text and "mode='max-autotune'" in text and "planted on purpose" in text
    assert INPUTS_FILE in text  # 100 elements: the inputs travel in a file, which the issue asks to attach
    assert "REPRODUCED: out[0] (torch.uint8)" in text and "`neg`" in text
    assert "**lowering 2**" in text and "**lowering 3**" not in text and "(3 more in report.json)" in text
    body = text.split("### Versions")[0]
    assert len(body.encode()) < 3500, len(body.encode())  # 2.4 KB of it the repro, planted bug included
    assert "`torch.compile(backend='inductor', mode='max-autotune')` gives results that differ from eager in " \
           "`neg` (out[0] (torch.uint8): differs from eager: 99 of 100 elements)." in text  # what happens


class Relu(torch.nn.Module):
    def forward(self, x):
        return (torch.relu(x) * 2,)


def relu_graph():
    gm = fx.symbolic_trace(Relu())
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm


@pytest.mark.slow
def test_a_compile_errors_issue_holds_the_compilers_own_error_lines(tmp_path):
    info = ReproInfo(signature="compile_error@inductor|CppCompileError|x", kind="compile_error", stage="inductor",
                     message="CppCompileError: C++ compile error",
                     setup=CompileSetup(CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"}), []),
                     source="relu_compile_error.py, graph 0 of 1")
    repro = write_repro(tmp_path / "out", relu_graph(), [torch.zeros(4)], info)
    report = {"script": "relu_compile_error.py", "graph_count": 1, "failing_graph": 0, "stage": "inductor",
              "ops": ["relu", "mul"], "repro": str(repro), "verified": True,
              "verify_line": "REPRODUCED: CppCompileError: C++ compile error",
              "failure": {"kind": "compile_error", "rung": "exception",
                          "message": "CppCompileError: error: 'compile' was not declared in this scope"}}
    text = write_issue(tmp_path / "out", report).read_text()
    assert text.startswith("Title: [inductor] CppCompileError: error: 'compile' was not declared in this scope "
                           "(relu, mul)\n")
    error = text.split("The error it gives:\n```\n", 1)[1].split("```", 1)[0]
    assert ".cpp:" in error and "error:" in error and "compile" in error, text  # g++'s own line, not the signature
    assert "warning:" not in error and "Traceback" not in error


@pytest.mark.slow
def test_a_crashs_issue_holds_its_stderr_and_its_zeros_inline(tmp_path):
    info = ReproInfo(signature="crash@inductor|SIGABRT", kind="crash", stage="inductor",
                     message="process died: SIGABRT",
                     setup=CompileSetup(CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "runtime_error"}), []),
                     source="relu_runtime_error.py, graph 0 of 1")
    # Large enough for an OpenMP-parallel kernel: the planted throw then aborts the process.
    repro = write_repro(tmp_path / "out", relu_graph(), [torch.zeros(256, 1024)], info)
    assert not (tmp_path / "out" / INPUTS_FILE).exists()  # all zeros: written inline, nothing to attach
    assert "torch.zeros((256, 1024), dtype=torch.float32, device=device)" in repro.read_text()
    report = {"script": "relu_runtime_error.py", "graph_count": 1, "failing_graph": 0, "stage": "inductor",
              "ops": ["relu"], "repro": str(repro), "verified": True,
              "verify_line": "REPRODUCED: crash: the compiled run died of SIGABRT",
              "failure": {"kind": "crash", "rung": "exception", "message": "process died: SIGABRT"}}
    text = write_issue(tmp_path / "out", report).read_text()
    assert text.startswith("Title: [inductor] crash in the compiled code of relu: process died: SIGABRT\n")
    error = text.split("The error it gives:\n```\n", 1)[1].split("```", 1)[0]
    assert "terminate called" in error and error.strip().endswith("(the process died of SIGABRT)"), text
    assert "attached" not in text and INPUTS_FILE not in text


def test_a_program_issue_shows_the_users_program_not_minifys_checker(tmp_path):
    from minifier.program.instrument import instrument, render
    from minifier.program.program_repro import write_program_issue

    program = "import torch\nimport copy\n\ndef f(x):\n    return copy.copy(x) * 2\ng = torch.compile(f)\nprint(g(torch.ones(3)))\n"
    (tmp_path / "repro.py").write_text(render(instrument(program)))
    message = "torch.compile differs from eager: Tensor-likes are not close!"
    report = {"program": {"repro": str(tmp_path / "repro.py"), "message": message, "oracle": "check"},
              "layer": {"name": "Dynamo (tracing)", "backend": "eager", "runs": [{"backend": "eager", "fails": True}]}}
    text = write_program_issue(tmp_path, report).read_text()
    shown = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert "compiled_checked" not in text and "deepcopy" not in shown and "g = torch.compile(f)" in shown
    assert "import copy" in shown  # the program's own import stays
    assert text.startswith("Title: [eager] Dynamo (tracing) makes the program fail: ") and message in text
    assert "### Versions" in text and "PyTorch version: " in text
