"""`minify fuzz` and its strategies: planted bugs are found, shrunk, minified to the op that
carries them and verified; an honest compiler yields no failures; masks hide known bugs."""
import json
from collections import Counter
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, seed, settings

from conftest import run_minify
from minifier.fuzz.command import main
from minifier.fuzz.drawn_program import Program, Step
from minifier.fuzz.failures import Failure, Masks, classify
from minifier.fuzz.op_catalog import catalog
from minifier.fuzz.strategies import programs

# Twenty-two ops; the three carrying a planted bug are not first, so finding them takes drawing.
OPS = ["abs", "add", "mul", "sub", "div", "sum", "amax", "mean", "where", "tanh", "nn.functional.relu",
       "maximum", "sqrt", "log", "neg", "cos", "sin", "floor", "exp", "cat", "nn.functional.leaky_relu", "sigmoid"]
PLANTED = {"neg": "neg:accuracy:double", "exp": "exp:compile_error", "sigmoid": "sigmoid:runtime_error"}


def draw_programs(count: int, **kwargs) -> list[Program]:
    drawn: list[Program] = []

    @seed(0)
    @settings(max_examples=count, database=None, deadline=None, suppress_health_check=list(HealthCheck))
    @given(program=programs(**kwargs))
    def collect(program):
        drawn.append(program)

    collect()
    return drawn


@pytest.mark.slow
def test_strategies_draw_valid_varied_programs():
    drawn = draw_programs(150)
    inputs = [t for p in drawn for t in p.input_list()]
    assert any(0 in t.shape for t in inputs), "no 0-size dim"
    assert any(1 in t.shape for t in inputs), "no 1-size dim"
    assert any(0 in t.stride() and t.numel() > 1 for t in inputs), "no expanded input"
    assert any(not t.is_contiguous() and 0 not in t.stride() for t in inputs), "no transposed/sliced input"
    assert any(t.storage_offset() for t in inputs), "no input with a storage offset"
    assert len({t.dtype for t in inputs}) >= 6
    assert any(len(p.steps) > 1 and "(v0" in p.steps[1].source() for p in drawn), "steps never chain"
    assert len({op for p in drawn for op in p.ops()}) >= 60
    assert {e.family for e in catalog().values()} >= {"unary", "binary", "reduction", "pointwise", "sampled"}
    for program in drawn[:40]:  # the source is valid torch code and runs eagerly to finite values
        namespace: dict = {"torch": torch}
        exec(program.function_source(), namespace)
        outs = namespace["program"](*program.input_list())
        assert all(torch.isfinite(o).all() for o in outs if isinstance(o, torch.Tensor) and o.is_floating_point())


def test_suspects_and_masks():
    program = draw_programs(1, ops=["neg"])[0]
    two = Program(program.inputs, program.steps + [Step("exp", "torch.exp", [], {}, "v1")])
    accuracy = {"status": "fail", "kind": "accuracy", "signature": "accuracy@inductor",
                "metrics": [{"output": "out[0]", "ok": True}, {"output": "out[1]", "ok": False}]}
    assert classify(accuracy, two).suspects == ["exp"]
    crash = {"status": "fail", "kind": "crash", "signature": "crash@inductor|SIGABRT"}
    assert classify(crash, two).suspects == ["exp", "neg"]
    masks = Masks(known=[Failure("crash@inductor|SIGABRT", "crash", "", ["neg"], program)])
    assert masks.matches(classify(crash, two))  # the known crash in neg, now with exp beside it
    assert not masks.matches(classify(accuracy, two))
    assert Masks.parse(["exp"]).matches(classify(accuracy, two))
    assert Masks.parse(["accuracy@"]).matches(classify(accuracy, two))
    assert not Masks.parse(["accuracy@inductor [neg]"]).matches(classify(accuracy, two))


def test_fuzz_rejects_bad_input(tmp_path):
    assert main(["--ops", "no_such_op", "-o", str(tmp_path)]) == 2
    assert main(["--dtypes", "float33", "-o", str(tmp_path)]) == 2
    assert main(["--inject", "neg:nonsense", "-o", str(tmp_path)]) == 2
    assert not (tmp_path / "fuzz.json").exists()


@pytest.mark.slow
def test_fuzz_finds_minifies_and_verifies_planted_bugs(tmp_path):
    out = tmp_path / "fuzz"
    args = ["fuzz", "--ops", *OPS, "--max-examples", "20", "--seed", "0", "-o", str(out), "-q"]
    for spec in PLANTED.values():
        args += ["--inject", spec]
    proc = run_minify(args, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    result = json.loads((out / "fuzz.json").read_text())
    rows = result["failures"]
    blamed = Counter(op for row in rows for op in row["suspects"])
    assert set(blamed) == set(PLANTED) and max(blamed.values()) == 1, [r["key"] for r in rows]
    for row in rows:
        op = row["suspects"][0]
        assert row["ops"] == [op], row["program"]  # hypothesis shrank the program to the one op
        assert row["verified"] is True, row
        assert row["reduced_ops"] == [op], row  # and the reducer agrees: one op, the planted one
        assert f"torch.{op}(" in Path(row["repro"]).read_text()
        assert row["tests"] and all(Path(t).is_file() for t in row["tests"])
        assert Path(row["case"]).is_file()
    kinds = {row["suspects"][0]: row["kind"] for row in rows}
    assert kinds["neg"] == "accuracy" and kinds["exp"] == "compile_error"
    assert kinds["sigmoid"] in ("runtime_error", "crash")
    assert result["examples"] == 20 and "distinct failures 3" in proc.stdout


@pytest.mark.slow
def test_fuzz_without_injection_reports_nothing(tmp_path):
    out = tmp_path / "fuzz"
    proc = run_minify(["fuzz", "--ops", *OPS, "--max-examples", "15", "--seed", "0", "-o", str(out), "-q"],
                      cwd=tmp_path)
    result = json.loads((out / "fuzz.json").read_text())
    assert proc.returncode == 0, [r["key"] for r in result["failures"]]
    assert result["failures"] == [] and result["examples"] == 15
    assert result["outcomes"].get("pass", 0) >= 10


@pytest.mark.slow
def test_fuzz_test_helper_shrinks_and_masks():
    from minifier.fuzz.pytest_targets import fuzz_test

    found = fuzz_test(ops=["abs", "neg"], dtypes=["float32"], max_steps=2, max_examples=10,
                      injections=["neg:accuracy:double"], database=None, derandomize=True)
    with pytest.raises(AssertionError) as info:
        found()
    assert "accuracy@inductor [neg]" in str(info.value) and "torch.neg(x0)" in str(info.value)
    masked = fuzz_test(ops=["abs", "neg"], dtypes=["float32"], max_steps=2, max_examples=6,
                       injections=["neg:accuracy:double"], masks=["neg"], database=None, derandomize=True)
    masked()
