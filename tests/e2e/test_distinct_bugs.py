"""Issue 3 end to end: distinct bugs stay distinct, integer/bool bugs are caught, randomness
and NaN in eager are not blamed on the compiler."""
import json
import textwrap
from pathlib import Path

import pytest

from conftest import run_minify


def _minify(tmp_path, source: str):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent(source))
    proc = run_minify([str(script), "-q"], cwd=tmp_path)
    report = json.loads((tmp_path / "minify-out" / "prog" / "report.json").read_text())
    return proc, report


@pytest.mark.slow
def test_two_accuracy_bugs_in_one_graph_give_two_reductions(tmp_path):
    proc, report = _minify(tmp_path, """\
        import torch
        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
        torch._inductor.config.cpp.inject_log1p_bug_TESTING_ONLY = "accuracy"
        def f(x, y):
            a = torch.relu(x) * 2
            b = torch.log1p(y.abs()) + 1
            return torch.tanh(a) + b.sin()
        torch.compile(f)(torch.randn(64), torch.randn(64))
        """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [b["ops"] for b in report["bugs"]] == [["relu"], ["log1p"]]
    assert all(b["verified"] for b in report["bugs"])


@pytest.mark.slow
def test_compile_error_and_accuracy_bug_in_different_ops(tmp_path):
    proc, report = _minify(tmp_path, """\
        import torch
        from compiler.inject import inject_bug
        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
        inject_bug("sign", "compile_error")
        def f(x, y):
            return torch.relu(x).sin() * torch.sign(y).cos()
        torch.compile(f)(torch.randn(32), torch.randn(32))
        """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kinds = {b["failure"]["kind"]: b["ops"] for b in report["bugs"]}
    assert kinds == {"compile_error": ["sign"], "accuracy": ["relu"]}


@pytest.mark.slow
def test_an_error_in_each_layer_does_not_hide_an_accuracy_bug_beside_it(tmp_path):
    """The relu knob's error (C++ throws) fails in both layers: once reduced to one relu, every
    relu is masked before the next search, which then finds log1p's wrong values rather than the
    other relu's error again ("same bug")."""
    proc, report = _minify(tmp_path, """\
        import torch
        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "runtime_error"
        torch._inductor.config.cpp.inject_log1p_bug_TESTING_ONLY = "accuracy"
        def f(x, y):
            a = torch.relu(x.sin()) * 2
            b = torch.relu(a.cos() - 1) + 3
            return b * torch.log1p(y.abs())
        torch.compile(f)(torch.randn(64), torch.randn(64))
        """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    kinds = {b["failure"]["kind"]: b["ops"] for b in report["bugs"]}
    assert kinds == {"runtime_error": ["relu"], "accuracy": ["log1p"]}, report["bugs"]
    assert all(b["verified"] for b in report["bugs"]), report["bugs"]


@pytest.mark.slow
def test_bool_output_bug_is_detected_and_reduced(tmp_path):
    proc, report = _minify(tmp_path, """\
        import torch
        from compiler.inject import inject_bug
        inject_bug("logical_not", template="{x}", paths=("cpp", "cppvec"))
        def f(x):
            m = torch.logical_not(x > 0.5)
            return m, (x * 3).cos()
        torch.compile(f)(torch.rand(40))
        """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["ops"] == ["logical_not"] and report["failure"]["kind"] == "accuracy"
    assert report["verified"] is True


@pytest.mark.slow
def test_dropout_without_seed_is_nondeterministic_not_a_bug(tmp_path):
    proc, report = _minify(tmp_path, """\
        import torch
        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5)).train()
        torch.compile(model)(torch.randn(4, 8))
        """)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert report["status"] == "nothing_failed"
    assert report["graphs"][0]["kind"] == "nondeterministic"
    assert "only random-number generation differs" in report["graphs"][0]["note"]


@pytest.mark.slow
def test_nan_in_eager_is_not_a_compiler_bug(tmp_path):
    proc, report = _minify(tmp_path, """\
        import torch
        def f(x):
            return torch.log(x) * 2, torch.sqrt(x - 1)
        torch.compile(f)(torch.linspace(-2, 2, 20))
        """)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert report["status"] == "nothing_failed"


def _relu_in_three_blocks(tmp_path, knob: str) -> list[dict]:
    """minify on three blocks whose relu each carries Inductor's relu bug of kind `knob`: one
    bug, relu, verified; the run's timeline."""
    proc, report = _minify(tmp_path, f"""\
        import torch
        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "{knob}"
        def f(x):
            for _ in range(3):
                x = torch.relu(x.sin() * 2) + x.cos()
            return x
        torch.compile(f)(torch.randn(64))
        """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [b["ops"] for b in report["bugs"]] == [["relu"]] and report["bugs"][0]["verified"]
    return json.loads((tmp_path / "minify-out" / "prog" / "work" / "timeline.json").read_text())


def _checks(timeline: list[dict], stage: str, runs: int | None = None) -> list[dict]:
    return [j for j in timeline if j["op"] == "check" and j["stage"] == stage and runs in (None, j["runs"])]


@pytest.mark.slow
def test_one_bug_repeated_in_every_layer_is_confirmed_once(tmp_path):
    """Three blocks, one mis-generated relu each: one bug, and once it is reduced every relu is
    masked at once, so the graph is confirmed once, not once per relu ("same bug" rounds)."""
    confirmations = _checks(_relu_in_three_blocks(tmp_path, "accuracy"), "inductor", runs=3)
    assert len(confirmations) == 1, [(j["source_lines"], j["status"]) for j in confirmations]


@pytest.mark.slow
def test_the_same_compile_error_after_masking_is_not_confirmed_again(tmp_path):
    """Three blocks, the relu of each fails to compile: no culprit node to mask them all, so
    after the first is reduced the graph fails again, with the same signature: that is the bug
    found, said at once, without its replays and stage checks."""
    timeline = _relu_in_three_blocks(tmp_path, "compile_error")
    confirmations = _checks(timeline, "inductor", runs=3)
    assert len(confirmations) == 1, [(j["source_lines"], j["status"]) for j in confirmations]
    eager_checks = _checks(timeline, "eager")
    assert len(eager_checks) == 1, [(j["source_lines"], j["status"]) for j in eager_checks]


@pytest.mark.slow
def test_a_later_graph_failing_with_a_known_compile_error_is_that_bug_without_replays(tmp_path):
    """Two graphs (a graph break between them), the relu of each fails to compile: once graph 0's
    bug is reduced, graph 1's first failure has its signature and no culprit node to tell them
    apart: it is that bug, said at once (on a GPU each replay of an assert is a fresh process)."""
    proc, report = _minify(tmp_path, """\
        import torch
        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "compile_error"
        def f(x):
            x = torch.relu(x.sin() * 2)
            torch._dynamo.graph_break()
            return torch.relu(x.cos() * 3)
        torch.compile(f)(torch.randn(64))
        """)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [b["ops"] for b in report["bugs"]] == [["relu"]] and report["bugs"][0]["also_in_graphs"] == [1]
    timeline = json.loads((tmp_path / "minify-out" / "prog" / "work" / "timeline.json").read_text())
    confirmations = _checks(timeline, "inductor", runs=3)
    assert len(confirmations) == 1, [(j["source_lines"], j["status"]) for j in confirmations]


def test_a_later_graph_with_the_same_bug_is_named_once_however_many_of_its_pieces_say_so():
    # GPT-2's generate with a planted tanh bug: each piece of graphs 1 and 2 found it again,
    # and the report read "same bug in graph(s) 1, 1, 1, 2, 2, 2"
    from minifier.search.bugs import Bug, same_bug_again

    bug, said = Bug(0, "accuracy", "accuracy@inductor", "inductor", "", 3, 3), []
    for index in (1, 1, 0, 2, 1, 2):
        same_bug_again(bug, index, said.append)
    assert bug.also_in == [1, 2]
    assert said[0] == "graph 1: same bug as graph 0" and len(said) == 6


@pytest.mark.slow
def test_two_repros_blamed_on_one_lowering_say_they_share_a_cause(tmp_path):
    # a planted neg bug reaches silu too (Inductor writes it with a neg), as in transformers' Llama
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""\
        import torch
        def f(x):
            return -x * 2, torch.nn.functional.silu(x + 1)
        torch.compile(f)(torch.randn(8, 16))
        """))
    proc = run_minify([str(script), "-q", "-j", "2", "--inject", "neg:accuracy:double"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "minify-out" / "prog" / "report.json").read_text())
    assert [b["ops"] for b in report["bugs"]] == [["neg"], ["silu"]]
    assert all(b["verified"] for b in report["bugs"])
    assert [b.get("same_cause_as") for b in report["bugs"]] == [None, 1]
    assert "blamed on the same part as bug 1" in proc.stdout + proc.stderr


def test_only_a_named_op_or_pass_makes_two_bugs_share_a_cause():
    from minifier.report.shared_causes import mark_shared_causes

    def lowering(target: str) -> dict:
        return {"what": "lowering", "run": {"disable": {"lowerings": [target.split(".")[1]]}, "verdict": "pass"},
                "targets": [target]}
    fusion = {"what": "fusion", "run": {"apart": "all", "verdict": "pass"}}
    config = {"what": "config", "run": {"config": {"x": None}, "verdict": "pass"}}
    decomp = {"what": "decomposition", "run": {"disable": {"decomposition": ["aten.cat.default"]}, "verdict": "pass"}}
    rows = [{"blame": [config, lowering("aten.neg.default")]}, {"blame": [fusion]}, {"blame": [fusion]},
            {"blame": [lowering("aten.neg.default")]}, {"blame": [config, lowering("aten.exp.default")]},
            {"blame": [decomp]}, {"blame": [decomp]}, {}]
    mark_shared_causes(rows)
    assert [r.get("same_cause_as") for r in rows] == [None, None, None, 1, None, None, 6, None]


@pytest.mark.slow
def test_a_later_graph_that_passes_with_a_known_bugs_op_masked_is_that_bug_without_a_replay(tmp_path):
    # three graphs (two graph breaks), the mis-generated relu in each
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""\
        import torch
        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
        def block(x):
            for i in range(6):
                x = torch.relu(x) if i == 2 else (-x if i % 2 else x + 0.5)
            return x
        def f(x):
            x = block(x)
            torch._dynamo.graph_break()
            x = block(x * 2)
            torch._dynamo.graph_break()
            return block(x - 1)
        torch.compile(f)(torch.randn(8, 16))
        """))
    proc = run_minify([str(script), "-q", "-j", "2"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = tmp_path / "minify-out" / "prog"
    report = json.loads((out / "report.json").read_text())
    assert [(b["ops"], b["also_in_graphs"], b["verified"]) for b in report["bugs"]] == [(["relu"], [1, 2], True)]
    timeline = json.loads((out / "work" / "timeline.json").read_text())
    # graphs 1 and 2: one check each with their relu fed its recorded value; no replays, no stage checks
    assert sum(1 for row in timeline if row["op"] == "check" and row["stage"] == "aot_eager") == 1


def test_a_known_accuracy_bugs_op_is_masked_first_only_in_a_graph_that_fails_on_values():
    import torch
    import torch.fx as fx

    from minifier.search.bugs import Bug
    from minifier.search.masking import known_ops

    gm = fx.symbolic_trace(lambda x: torch.relu(x) + torch.sin(x))
    values = {"relu": torch.ones(2), "sin": torch.ones(2)}
    relu = Bug(0, "accuracy", "accuracy@inductor", "inductor", "", 3, 3)
    known = {("accuracy@inductor", "relu"): relu, ("compile_error@inductor", None): relu}
    assert known_ops(gm, values, known, "accuracy@inductor") == {"relu": relu}
    # a compile error would pass with relu masked, and be called the accuracy bug
    assert known_ops(gm, values, known, "compile_error@inductor|SyntaxError") == {}
    assert known_ops(gm, {}, known, "accuracy@inductor") == {}  # no recorded value to feed it


@pytest.mark.slow
def test_a_planted_bug_in_the_forward_and_backward_graphs_is_one_bug(tmp_path):
    """Issue 45, item 2: a training step's planted erf bug was two bugs, `gelu` in the forward
    graph (Inductor lowers it through erf) and `erf` in the backward one (gelu's derivative).
    Both repros fail on values at Inductor and blame names erf's lowering in each: one bug, its
    repro the forward graph's, the backward graph listed with its own reduction."""
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""\
        import torch
        import torch.nn as nn
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        x, y = torch.randn(8, 16), torch.randn(8, 4)
        loss = ((torch.compile(model)(x) - y) ** 2).mean()
        loss.backward()
        opt.step()
        """))
    proc = run_minify([str(script), "-q", "-j", "2", "--inject", "erf:accuracy:double"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = tmp_path / "minify-out" / "prog"
    report = json.loads((out / "report.json").read_text())
    assert [(b["failing_graph"], b["ops"], b["also_in_graphs"]) for b in report["bugs"]] == [(0, ["gelu"], [1])]
    folded = report["also_reduced"]
    assert [(a["failing_graph"], a["part"], a["ops"], a["verified"]) for a in folded] == [(1, "backward", ["erf"], True)]
    assert "aten.erf.default" in folded[0]["why"] and report["findings"]["findings"] == 1
    assert report["failing_graphs"] == [0, 1] and report["repro"] == str(out / "repro.py")
    assert "graph 2 (index 1, backward): reduced there to erf" in proc.stdout
    assert "bug 2" not in proc.stdout
    assert "The same bug shows in graph 1 (backward) reduced to `erf`" in (out / "issue.md").read_text()


def test_a_real_bug_found_beside_a_planted_one_is_told_apart_and_its_repro_carries_no_plant(tmp_path):
    """--inject plants relu; the script also holds a real layout bug of cat (corpus/real). Each
    verified repro is run once more without the plant: the real bug's still fails, and its
    repro.py and issue.md are written without the plant; the plant's passes without it."""
    from conftest import ROOT, run_repro_elsewhere

    script = ROOT / "corpus" / "real" / "strides_cat_empty_cache_beside_plant.py"
    out = tmp_path / "out"
    proc = run_minify([str(script), "-o", str(out), "-q", "--inject", "relu:accuracy:double"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    bugs = {tuple(b["ops"]): b for b in report["bugs"]}
    assert set(bugs) == {("cat",), ("relu",)} and all(b["verified"] is True for b in bugs.values()), bugs
    real, planted = bugs[("cat",)], bugs[("relu",)]
    assert real["plant"] == "not needed" and real["stage"] == "aot_eager_decomp_partition"
    assert planted["plant"] == "needed" and planted["stage"] == "inductor"
    real_repro, planted_repro = Path(real["repro"]), Path(planted["repro"])
    assert "Planted on purpose" not in real_repro.read_text() and "Planted on purpose" in planted_repro.read_text()
    assert run_repro_elsewhere(real_repro, tmp_path).returncode == 1  # fails from a fresh folder, no plant in it
    if real_repro.parent == out:  # the first bug's issue text: no "planted on purpose" note on a real bug
        assert "planted on purpose" not in (out / "issue.md").read_text()
