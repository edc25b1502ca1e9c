"""What a program-level failure is, so that its reduction keeps that failure and no other.

A graph that raised while compiling fell back to eager in the capture (so the script went on),
which left nothing to see end to end: the program is run once more with nothing falling back
(issue 194706: a C++ compile error inside torch.func.jacfwd ended in exit 4). And a reduced
candidate must fail the same way, not merely "differ" (issue 191449: a wrong shape was reduced
to a resize_ whose unset memory differed now and then, a repro that did not verify).
"""
from types import SimpleNamespace

import pytest
from compiler.judging import Judging
from minifier.capture.process import run_capture
from minifier.capture.process import run_capture
from minifier.program import interaction
from minifier.program.instrument import MARKS, RunResult
from minifier.program.stage import _raised_when_compiled

PLANTED_IN_GRAD = """import torch
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
torch.manual_seed(0)
print(torch.compile(torch.func.grad(lambda x: torch.relu(x).sin().sum()))(torch.randn(8)))
"""


@pytest.mark.slow
def test_a_graph_that_raised_inside_torch_func_fails_the_program_end_to_end(tmp_path):
    script, work = tmp_path / "grad_relu.py", tmp_path / "work"
    script.write_text(PLANTED_IN_GRAD)
    capture = run_capture(script, [], work / "capture", work / "capture.log", 300)
    eager = run_capture(script, [], work / "eager", work / "eager.log", 300, eager=True)
    assert [g.failure["kind"] for g in capture.graphs if g.failure] == ["compile_error"]
    assert capture.script["status"] == "ok"  # the graph fell back to eager: the script ran to its end
    assert interaction.end_to_end_failure(capture, eager) is None
    opts = SimpleNamespace(program=None, script=script, script_args=[], timeout=300, injections=[],
                           judging=Judging())
    report = {}
    e2e = _raised_when_compiled(SimpleNamespace(opts=opts, work=work), capture, eager, report)
    assert e2e is not None and e2e.how == "script" and "CppCompileError" in e2e.message, e2e
    assert report["end_to_end"]["message"] == e2e.message


def test_a_program_failure_keeps_its_kind_without_its_numbers():
    def signature(detail: str, mark: str = MARKS[1]) -> str:
        return RunResult(1, f"{mark} {detail}").signature

    shape = signature("The values for attribute 'shape' do not match: torch.Size([12]) != torch.Size([1]).")
    assert shape == signature("The values for attribute 'shape' do not match: torch.Size([3]) != torch.Size([1]).")
    values = signature("Tensor-likes are not close! Mismatched elements: 2 / 3 (66.7%) Greatest absolute ...")
    assert values == signature("Tensor-likes are not close! Mismatched elements: 1 / 3 (33.3%) Greatest absolute ...")
    assert shape != values
    cpp = signature("InductorError: CppCompileError: C++ compile error", MARKS[0])
    assert cpp == MARKS[0] + " InductorError: CppCompileError"
    assert cpp != signature("InductorError: AssertionError: ", MARKS[0])
    assert signature("RuntimeError: shapes 3 and 4 differ", MARKS[0]) == MARKS[0] + " RuntimeError"
