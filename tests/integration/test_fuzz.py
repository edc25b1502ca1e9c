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
def test_strategies_draw_where_bugs_live():
    """Lengths around the vector widths, signed zeros, denormals, NaN/Inf, integer min/max,
    uint8 wrap-around values and ties are all drawn (the edges, not only nice values)."""
    from minifier.fuzz.tensor_strategies import edge_values, make_values, sprinkle

    drawn = draw_programs(120, allow_nonfinite=True)
    inputs = [t for p in drawn for t in p.input_list()]
    assert any(set(t.shape) & {15, 17, 31, 33, 63, 65} for t in inputs), "no length around a vector width"
    floats = [t for t in inputs if t.is_floating_point() and t.numel()]
    assert any(bool(((t == 0) & t.signbit()).any()) for t in floats), "no -0.0"
    assert any(bool(t.isnan().any()) for t in floats) and any(bool(t.isinf().any()) for t in floats)
    assert any(bool(((t != 0) & (t.abs() < torch.finfo(t.dtype).tiny)).any()) for t in floats), "no denormal"
    ints = [t for t in inputs if not t.is_floating_point() and t.dtype != torch.bool and t.numel()]
    assert any(bool((t == torch.iinfo(t.dtype).min).any() | (t == torch.iinfo(t.dtype).max).any()) for t in ints)
    assert set(edge_values(torch.uint8, False).tolist()) >= {0, 1, 127, 128, 255}
    assert torch.finfo(torch.float32).max not in edge_values(torch.float32, True).tolist()  # numerics, not bugs
    ties = make_values((33,), torch.float32, "ties", seed=1)
    assert ties.unique().numel() == 2
    special = sprinkle(torch.ones(64), "special", seed=0)
    assert bool(special.isnan().any()) and bool((special == 1).any())
    assert torch.equal(sprinkle(torch.arange(9), "special", seed=0), torch.arange(9))  # indices stay


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
    ops = {op for p in drawn for op in p.ops()}
    assert len(ops) >= 50  # families are drawn first, then an op of the family
    assert {catalog()[op].family for op in ops} == {"unary", "binary", "reduction", "pointwise", "sampled"}
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
    signed = {**accuracy, "signature": "accuracy@inductor|signed_zero", "rung": "signed_zero"}
    assert Masks.parse(["signed_zero", "layout"]).matches(classify(signed, two))  # a rung's name masks it
    assert not Masks.parse(["signed_zero"]).matches(classify(accuracy, two))


def test_mask_lists_split_at_commas_but_keys_do_not():
    from minifier.fuzz.command import options, parser

    ns = parser().parse_args(["--mask", "signed_zero,layout", "--mask", "accuracy@inductor [neg, exp]"])
    assert options(ns).masks == ["signed_zero", "layout", "accuracy@inductor [neg, exp]"]


def test_fuzz_rejects_bad_input(tmp_path):
    assert main(["--ops", "no_such_op", "-o", str(tmp_path)]) == 2
    assert main(["--dtypes", "float33", "-o", str(tmp_path)]) == 2
    assert main(["--inject", "neg:nonsense", "-o", str(tmp_path)]) == 2
    assert not (tmp_path / "fuzz.json").exists()


@pytest.mark.e2e
@pytest.mark.slow
def test_fuzz_finds_minifies_and_verifies_planted_bugs(tmp_path):
    out = tmp_path / "fuzz"
    # the planted bugs only: real ones in these ops (signed zeros, layouts, NaN/Inf) are masked;
    # forward only, so each planted bug is found once, in its own op (through backward the neg
    # bug also shows in div's gradient, -g*a/b**2: tests/test_fuzz_backward.py covers backward)
    args = ["fuzz", "--ops", *OPS, "--max-examples", "30", "--seed", "0", "-o", str(out), "-q", "--finite-only",
            "--backward", "0",
            "--mask", "accuracy@inductor|signed_zero", "--mask", "layout@", "--mask", "accuracy@inductor|nan_inf"]
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
    assert result["examples"] == 30 and "distinct findings 3" in proc.stdout
    # the findings table: errors first (rank 1), then wrong values; op, dtype and rung named
    assert [row["rank"] for row in rows] == sorted(row["rank"] for row in rows)
    ranked = {row["suspects"][0]: (row["rank"], row["rung"], row["dtype"]) for row in rows}
    assert ranked["neg"] == (2, "values", "float32") and ranked["exp"][:2] == (1, "exception")
    assert (out / "fuzz.html").is_file() and "neg" in (out / "fuzz.html").read_text()
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.e2e
@pytest.mark.slow
def test_fuzz_replays_saved_findings(tmp_path):
    """A campaign saves its findings in the example database; --replay checks them again
    without drawing new programs."""
    db = tmp_path / "db"
    common = ["--ops", "abs,neg", "--dtypes", "float32", "--inject", "neg:accuracy:double", "--no-reduce", "-q",
              "--db", str(db), "--mask", "accuracy@inductor|signed_zero", "--seed", "0"]  # fuzz draws a random seed
    first = run_minify(["fuzz", *common, "--max-examples", "15", "-o", str(tmp_path / "a")], cwd=tmp_path)
    assert first.returncode == 1, first.stdout[-2000:]
    assert any(db.rglob("*")), "nothing saved in the example database"
    again = run_minify(["fuzz", *common, "--replay", "-o", str(tmp_path / "b")], cwd=tmp_path)
    replayed = json.loads((tmp_path / "b" / "replay.json").read_text())  # a replay's own record
    assert again.returncode == 1, again.stdout[-2000:]
    assert [r["key"] for r in replayed["failures"]] == ["accuracy@inductor [neg]"]
    assert replayed["stopped"] == "replayed" and replayed["compiles"] < 10


@pytest.mark.e2e
@pytest.mark.slow
def test_fuzz_without_injection_reports_nothing(tmp_path):
    out = tmp_path / "fuzz"
    # finite values, and the rungs with real bugs in these ops on torch 2.13 left out
    proc = run_minify(["fuzz", "--ops", *OPS, "--max-examples", "15", "--seed", "0", "-o", str(out), "-q",
                       "--finite-only", "--mask", "accuracy@inductor|signed_zero", "--mask", "layout@"], cwd=tmp_path)
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
    # shrunk to a 0-d input; how many steps Hypothesis's shrinker keeps differs between its
    # releases (6.170.17: `neg(x0)`; 6.170.27: `neg(abs(x0))`, both at most max_steps)
    text = str(info.value)
    assert "accuracy@inductor [neg]" in text and "torch.neg(" in text and "# x0: float32[]" in text, text
    masked = fuzz_test(ops=["abs", "neg"], dtypes=["float32"], max_steps=2, max_examples=6,
                       injections=["neg:accuracy:double"], masks=["neg"], database=None, derandomize=True)
    masked()


@pytest.mark.slow
def test_ready_made_targets_run_under_pytest_on_a_shared_database(tmp_path):
    """minifier/fuzz/targets.py runs as an ordinary pytest file (as pytest-xdist and HypoFuzz
    run it), saving a failure into the database folder MINIFY_FUZZ_DB names."""
    import os
    import subprocess
    import sys

    from conftest import ROOT

    db = tmp_path / "db"
    env = {**os.environ, "MINIFY_FUZZ_DB": str(db), "MINIFY_FUZZ_EXAMPLES": "3", "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-seed=0",
                           str(ROOT / "minifier" / "fuzz" / "targets.py"), "-k", "pointwise"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert "1 passed" in proc.stdout or ("1 failed" in proc.stdout and "@inductor" in proc.stdout), proc.stdout[-3000:]
    assert "error" not in proc.stdout.splitlines()[-1], proc.stdout[-3000:]
    assert "1 failed" not in proc.stdout or db.is_dir()  # a failure is saved there, to be replayed first


def test_a_failure_the_minifier_judges_numerics_is_not_a_finding():
    from minifier.exit_codes import EXIT_NUMERICS, EXIT_OK
    from minifier.fuzz.cases import numerics_apart

    rows = [{"number": 1, "exit": EXIT_OK, "verified": True}, {"number": 2, "exit": EXIT_NUMERICS, "verified": False},
            {"number": 3, "exit": 3, "verified": False}]  # exit 3: minify saw nothing fail; kept, as not verified
    findings, numerics = numerics_apart(rows)
    assert [r["number"] for r in findings] == [1, 3] and [r["number"] for r in numerics] == [2]


def test_internal_ops_keep_the_layouts_their_callers_pass():
    """Eager's native_group_norm reads a strided bias as if it were dense (its public wrapper
    never passes one; torch 2.13), so an internal op's inputs keep OpInfo's layouts, while the public op's
    inputs are restrided."""
    internal = [t for p in draw_programs(40, ops=["native_group_norm", "native_layer_norm"], max_steps=1)
                for t in p.input_list()]
    assert internal and all(t.is_contiguous() and not t.storage_offset() for t in internal)
    public = [t for p in draw_programs(40, ops=["nn.functional.group_norm"], max_steps=1) for t in p.input_list()]
    assert any(not t.is_contiguous() or t.storage_offset() for t in public)


@pytest.mark.slow
def test_an_infinity_where_eager_makes_nan_from_infinite_inputs_is_listed_apart():
    """var_mean of a row holding -inf: the mean is -inf (torch.mean agrees) but eager's Welford
    makes inf - inf = NaN, and the fp64 reference runs the same algorithm; compiled gives -inf.
    Found by a 30-minute campaign as a NaN/Inf bug; it is ranked with signed zeros and layouts.
    A NaN/Inf difference without infinite inputs (var_mean of nothing) stays rank 3."""
    import torch._dynamo

    from compiler.oracle import check
    from minifier.fuzz.drawn_program import Ref

    def judged(x):
        program = Program({"x0": x}, [Step("var_mean", "torch.var_mean", [Ref("x0")], {"dim": -1}, "v0")])
        namespace: dict = {"torch": torch}
        exec(program.function_source(), namespace)
        torch._dynamo.reset()
        fn = namespace["program"]
        outcome = check(fn, [x], torch.compile(fn, backend="inductor"))
        if outcome.status != "fail":
            pytest.skip(f"this torch ({torch.__version__}) no longer shows the difference")
        return classify(outcome.__dict__, program)

    row = torch.tensor([[float("-inf"), -8.07, 1.14, -3.89, -3.52]] * 2)
    limit = judged(row)
    assert (limit.rung, limit.rank) == ("inf_for_nan", 4), limit.message
    assert Masks.parse(["inf_for_nan"]).matches(limit)
    empty = judged(torch.zeros(0))
    assert (empty.rung, empty.rank) == ("nan_inf", 3), empty.message
