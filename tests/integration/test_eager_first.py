"""Never a false bug report: a script broken without the compiler is the user's bug (exit 2),
a program failure's signature is the error itself (never Dynamo's advice lines), a candidate or
repro that fails with nothing compiled proves nothing, and a switch that turns compilation off
is named.

Real torch.compile runs throughout: Dynamo's messages come from compiling small failing
functions, the scripts' records from real capture runs.
"""
import json
import sys
import traceback
from pathlib import Path

import pytest
import torch

from conftest import run_minify
from compiler.signature import ADVICE, core_error, last_exception, meaningful_line, program_signature
from minifier.capture.process import Capture, run_capture
from minifier.program.instrument import RunResult, run_program
from minifier.program.interaction import fails_in_eager_too
from minifier.program.program_repro import verify
from minifier.program.source_reduce import holds
from minifier.program.stage import compile_switched_off
from minifier.workers.interpreters import WarmInterpreters
from repro.verify import run_control


def raised(fn, *args) -> tuple[str, str, str]:
    try:
        fn(*args)
    except Exception as exc:
        return type(exc).__name__, str(exc), traceback.format_exc()
    raise AssertionError("it did not raise")


def graph_break_in_fullgraph(x):
    print("a side effect")
    return x + 1


def dynamo_failures():
    """Real errors Dynamo raises for user mistakes and for what it cannot trace."""
    torch._dynamo.reset()
    return [raised(torch.compile(lambda a, b: a @ b, backend="eager"), torch.randn(3, 4), torch.randn(5, 6)),
            raised(torch.compile(lambda a: a.view(3, 5), backend="eager"), torch.randn(4)),
            raised(torch.compile(lambda a: a + torch.ones(3), backend="eager"), torch.randn(4)),
            raised(torch.compile(graph_break_in_fullgraph, backend="eager", fullgraph=True), torch.randn(2))]


def test_a_program_signature_is_the_error_never_dynamos_advice():
    failures = dynamo_failures()
    assert any("TORCHDYNAMO_VERBOSE" in message for _, message, _ in failures)  # the advice is there to skip
    for name, message, trace in failures:
        signature = program_signature(name, message)
        assert not any(word in signature for word in ("TORCHDYNAMO_VERBOSE", "suppress", "from user code",
                                                      "Explanation", "Hint", "developer context")), signature
        assert signature.split(":")[0] in ("RuntimeError", "Unsupported"), signature
        assert len(signature.split(": ", 1)) == 2 and signature.split(": ", 1)[1], signature
        # from a process's stderr the same: its last traceback's exception line and message
        assert program_signature(*last_exception(trace)) == signature
    # the fake-tensor error under TorchRuntimeError is a RuntimeError with its own words, numbers normalized
    assert program_signature(*failures[0][:2]) == \
        "RuntimeError: a and b must have same reduction dim, but got [N, N] X [N, N]."
    assert not any(__import__("re").match(a, meaningful_line(failures[0][1])) for a in ADVICE)
    assert core_error("ValueError", "my own error 12") == ("ValueError", "my own error 12")


def script_record(name: str, message: str, trace: str) -> dict:
    return {"status": "error", "type": name, "message": message, "traceback": trace}


def test_the_same_user_mistake_in_dynamos_words_fails_in_eager_too():
    """Dynamo's fake tensors word a shape mistake otherwise than eager (`Attempting to broadcast`
    vs `The size of tensor a (4) must match`): the same line of the user's code raises in both,
    so it is the user's error. A failure only the compiled run shows is not."""
    torch._dynamo.reset()
    add = lambda a: a + torch.ones(3)  # noqa: E731
    compiled, eager = raised(torch.compile(add, backend="eager"), torch.randn(4)), raised(add, torch.randn(4))
    assert program_signature(*compiled[:2]) != program_signature(*eager[:2])  # other words
    assert fails_in_eager_too(script_record(*compiled), script_record(*eager)) == f"RuntimeError: {eager[1]}"
    assert fails_in_eager_too(script_record(*compiled), {"status": "ok"}) is None
    other = raised(lambda: 1 / 0)
    assert fails_in_eager_too(script_record(*compiled), script_record(*other)) is None


@pytest.mark.e2e
def test_a_shape_mismatch_that_fails_in_eager_too_exits_2(tmp_path):
    script = tmp_path / "mm.py"
    script.write_text("import torch\ntorch.compile(lambda a, b: a @ b)(torch.randn(3, 4), torch.randn(5, 6))\n")
    proc = run_minify([str(script), "-o", str(tmp_path / "out")], cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-2000:]
    said = [line for line in (proc.stdout + proc.stderr).splitlines() if "fails without torch.compile too" in line]
    assert len(said) == 1 and "mat1 and mat2 shapes cannot be multiplied" in said[0], proc.stdout + proc.stderr
    assert not (tmp_path / "out" / "repro.py").exists()


def test_a_candidate_that_fails_with_nothing_compiled_does_not_hold(tmp_path):
    """A deleted line leaves a NameError, or an unconditional `sys.exit(1)` stays: the candidate
    fails compiled "the same way", and with nothing compiled too: rejected."""
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\nsys.exit(1)\n")
    clean = tmp_path / "clean.py"
    clean.write_text("x = 1\n")
    name_error = tmp_path / "name_error.py"
    name_error.write_text("print(undefined_name)\n")
    compiled = run_program(broken, tmp_path, 60)
    assert compiled.signature_in("plain") == "exit status 1"
    assert not holds(compiled, "exit status 1", "plain", lambda: run_program(broken, tmp_path, 60))
    assert holds(compiled, "exit status 1", "plain", lambda: run_program(clean, tmp_path, 60))
    failed = run_program(name_error, tmp_path, 60)
    assert failed.signature_in("plain") == "NameError: name 'undefined_name' is not defined"
    assert not holds(failed, failed.signature_in("plain"), "plain", lambda: run_program(name_error, tmp_path, 60))
    assert not holds(RunResult(0, ""), "exit status 1", "plain", lambda: run_program(clean, tmp_path, 60))


@pytest.mark.slow
def test_a_program_repro_that_fails_without_the_compiler_is_not_verified(tmp_path):
    repro = tmp_path / "repro.py"
    repro.write_text("import torch\ntorch.compile(lambda a, b: a @ b, backend='eager')(torch.randn(3, 4), "
                     "torch.randn(5, 6))\n")
    signature = run_program(repro, tmp_path, 300).signature_in("plain")
    assert signature.startswith("RuntimeError: a and b must have same reduction dim")
    verified, why = verify(repro, signature, "plain", 300)
    assert not verified and why.startswith("fails without the compiler too"), why


GRAPH_REPRO = """import torch
def f(x):
    return x + 1
def wrong(gm, example_inputs):  # a backend that miscompiles: what a repro shows while the bug is there
    return lambda *args: (args[0] + 2,)
x = torch.ones(2)
{body}
if not torch.equal(torch.compile(f, backend=wrong)(x), f(x)):
    print("REPRODUCED: compiled differs from eager")
    raise SystemExit(1)
print("NOT REPRODUCED: compiled matches eager")
"""


@pytest.mark.slow
def test_a_graph_repros_control_runs_with_the_compiler_off_even_after_torch_is_imported(tmp_path):
    good, bad = tmp_path / "good" / "repro.py", tmp_path / "bad" / "repro.py"
    for path, body in ((good, ""), (bad, "x = x.view(3, 5)  # broken in eager too")):
        path.parent.mkdir()
        path.write_text(GRAPH_REPRO.format(body=body))
    warm = WarmInterpreters().take()  # torch imported and a compile made before repro.py runs
    try:
        assert run_control(good, 300, prewarmed=warm).reproduced  # passes with nothing compiled
    finally:
        warm.close()
    control = run_control(bad, 300)
    assert not control.reproduced and "RuntimeError" in control.line


@pytest.mark.slow
@pytest.mark.parametrize("variable", ["TORCHDYNAMO_DISABLE", "TORCH_COMPILE_DISABLE"])
def test_a_switch_that_turns_compilation_off_is_named(variable, tmp_path, monkeypatch):
    script = tmp_path / "ok.py"
    script.write_text("import torch\nprint(torch.compile(lambda x: x + 1)(torch.ones(2)))\n")
    monkeypatch.setenv(variable, "1")
    capture = run_capture(script, [], tmp_path / "capture", tmp_path / "capture.log", 300)
    assert capture.graphs == [] and capture.script["status"] == "ok"
    assert compile_switched_off(capture) == f"{variable}=1 in the environment"
    monkeypatch.delenv(variable)
    by_script = Capture([], {"status": "ok", "dynamo_disabled": True}, 0.0)
    assert "torch._dynamo.config.disable" in compile_switched_off(by_script)
