"""`minify fuzz` through backward: a bug only the backward graph carries is found as a wrong
gradient, shrunk, written as a case script that calls backward, minified and verified; a
forward-only campaign does not see it."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from conftest import ROOT, run_minify
from compiler.grads import Backward, requiring_grad, weighted_loss
from compiler.oracle import check
from minifier.fuzz.drawn_program import Program, Ref, Step
from minifier.fuzz.failures import Masks, classify

# tanh' = 1 - y*y: the backward graph subtracts, the forward of these three ops never does
OPS = ["tanh", "neg", "abs"]
BACKWARD_ONLY = "sub:accuracy:add_one"


def tanh_program(backward: bool) -> Program:
    x = torch.linspace(-2, 2, 6).reshape(2, 3)
    return Program({"x0": x}, [Step("tanh", "torch.tanh", [Ref("x0")], {}, "v0"),
                               Step("neg", "torch.neg", [Ref("v0")], {}, "v1")], backward=backward)


def test_weighted_loss_weights_show_sign_and_scale():
    x = torch.zeros(7, requires_grad=True)
    weighted_loss((x * 1, [torch.ones(2)])).backward()  # a list inside; an output without grad
    assert x.grad.tolist() == [0.5, -1.0, 1.5, -0.5, 1.0, -1.5, 0.5]
    assert weighted_loss([torch.arange(3)]) is None  # nothing floating that needs a gradient


def test_backward_flag_survives_shrinking_and_changes_the_key():
    program = tanh_program(backward=True)
    assert program.differentiable()
    assert program.prefix(1).backward and program.without_step(0, program.eager_values()).backward
    assert program.key() != tanh_program(backward=False).key()
    ints = Program({"x0": torch.arange(4)}, [Step("neg", "torch.neg", [Ref("x0")], {}, "v0")])
    assert not ints.differentiable()  # no floating input: nothing to differentiate


def test_the_oracle_judges_gradients_and_names_them():
    model = lambda x: (torch.tanh(x),)  # noqa: E731
    wrong = lambda x: (torch.tanh(x) + (x - x.detach()) * 2,)  # noqa: E731 - right values, wrong gradient
    inputs = requiring_grad([torch.linspace(-1, 1, 8)])
    outcome = check(Backward(model), inputs, Backward(wrong))
    assert outcome.status == "fail" and outcome.signature == "accuracy@inductor"
    assert "grad[0]" in outcome.message
    program = Program({"x0": inputs[0].detach()}, [Step("tanh", "torch.tanh", [Ref("x0")], {}, "v0")], backward=True)
    failure = classify(outcome.__dict__, program)
    assert failure.gradient == "grad[x0]" and failure.key == "accuracy@inductor grad[x0] [tanh]"
    forward = {**outcome.__dict__, "metrics": [{"output": "out[0]", "ok": False, "rung": "values"}]}
    assert classify(forward, program).gradient is None
    masks = Masks(known=[classify(forward, program)])
    assert not masks.matches(failure)  # a wrong gradient is not the known wrong output
    assert check(Backward(model), inputs, Backward(model)).status == "pass"


def test_a_gradient_at_a_nan_input_is_not_judged():
    """hardshrink at NaN: eager's vectorized backward kernel gives 0 (its scalar tail, and
    Inductor's decomposition, the incoming gradient: NaN compares false either way); no value
    is a derivative there (found by a 30-minute campaign as a wrong grad[x3]). The oracle's run
    marks a gradient NaN where its input is NaN, even when the forward masks the NaN out."""
    import torch._dynamo
    from compiler.oracle import run

    x = torch.linspace(-3, 3, 16)
    x[::5] = float("nan")
    model = lambda t: (torch.nn.functional.hardshrink(t),)  # noqa: E731
    torch._dynamo.reset()
    compiled = torch.compile(model, backend="inductor")
    assert check(Backward(model), requiring_grad([x]), Backward(compiled)).status == "pass"
    masked = lambda t: (torch.where(t.isnan(), 0.0, t * 3),)  # noqa: E731 - a finite forward
    grad = run(Backward(masked), requiring_grad([x])).value["grad[0]"]
    k = torch.arange(16)
    weights = ((k % 3 + 1) * (1 - 2 * (k % 2))).float() / 2  # weighted_loss's
    assert torch.allclose(grad, (3 * weights).masked_fill(x.isnan(), float("nan")), equal_nan=True)


def test_gradients_through_a_nan_forward_value_are_not_judged():
    """lerp then hardshrink, the end broadcast over a tensor holding NaN (a 30-minute campaign's
    unverified grad[x0] finding): x0 is finite, but its gradient sums what flows back through
    NaN values, 0 in eager's vectorized kernel, the incoming gradient in Inductor's. The metrics
    say the gradients were not judged, and why."""
    import torch._dynamo

    start = torch.linspace(-3, 3, 64).reshape(4, 16)
    end = torch.linspace(-40, 40, 3 * 64).reshape(3, 4, 16)
    end[:, :, ::5] = float("nan")
    model = lambda s, e: (torch.nn.functional.hardshrink(torch.lerp(s, e, 0.25)),)  # noqa: E731
    torch._dynamo.reset()
    outcome = check(Backward(model), requiring_grad([start, end]), Backward(torch.compile(model, backend="inductor")))
    assert outcome.status == "pass", outcome.message
    skipped = [m for m in outcome.metrics if m.get("not_judged")]
    assert {m["output"] for m in skipped} == {"out['grad[0]']", "out['grad[1]']"}
    assert not any("numerics" in m for m in skipped)  # not judged is not "numerics"


@pytest.mark.e2e
@pytest.mark.slow
def test_fuzz_finds_a_backward_only_bug_as_a_wrong_gradient(tmp_path):
    common = ["fuzz", "--ops", *OPS, "--dtypes", "float32", "--max-examples", "40", "--seed", "0", "-q",
              "--finite-only", "--inject", BACKWARD_ONLY]
    proc = run_minify(common + ["--backward", "0.5", "-o", str(tmp_path / "bw")], cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = json.loads((tmp_path / "bw" / "fuzz.json").read_text())["failures"]
    assert len(rows) == 1, [r["key"] for r in rows]
    row = rows[0]
    assert row["backward"] and row["gradient"] and row["gradient"] in row["key"], row["key"]
    assert row["ops"] == ["tanh"], row["program"]  # shrunk to the op whose derivative subtracts
    assert row["verified"] is True and row["reduced_ops"] == ["sub"], row  # the backward graph's sub
    case = Path(row["case"]).read_text()
    assert ".backward()" in case and "def weighted_loss" in case
    # the case script is a user program: run alone in a fresh process, it shows the wrong gradient
    check_grads = (f"import runpy, torch\n"
                   f"case = runpy.run_path({row['case']!r})\n"
                   f"inputs = [x.detach().requires_grad_() for x in case['make_inputs']()]\n"
                   f"case['weighted_loss'](case['program'](*inputs)).backward()\n"
                   f"_, compiled = case['main']()\n"
                   f"print('DIFFERS' if not torch.allclose(inputs[0].grad, compiled[0]) else 'SAME')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}
    fresh = subprocess.run([sys.executable, "-c", check_grads], capture_output=True, text=True, env=env,
                           timeout=300, cwd=tmp_path)
    assert "DIFFERS" in fresh.stdout, fresh.stdout[-2000:] + fresh.stderr[-2000:]
    # the same campaign forward only: the bug is out of its reach
    proc = run_minify(common + ["--backward", "0", "--no-reduce", "-o", str(tmp_path / "fw")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert json.loads((tmp_path / "fw" / "fuzz.json").read_text())["failures"] == []
