"""`minify bench` scores a real minify run against the manifest, and the bug it hands the
built-in minifier travels into fresh processes through sitecustomize.py."""
import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT

from compiler.inject import parse_spec
from minifier.bench import score, select, sitecustomize_source, summary


def test_default_subset_is_cpu_and_explicit_choices_win():
    cases = [{"name": "a", "device": "cpu", "tags": ["default"]}, {"name": "b", "device": "cpu", "tags": []},
             {"name": "c", "device": "cuda", "tags": ["default"]}]
    assert [c["name"] for c in select(cases, None, None, "cpu", False)] == ["a"]
    assert [c["name"] for c in select(cases, None, None, "cpu", True)] == ["a", "b"]
    assert [c["name"] for c in select(cases, None, None, "cuda", False)] == ["c"]
    assert [c["name"] for c in select(cases, "c,b", None, "cpu", False)] == ["b", "c"]
    assert [c["name"] for c in select(cases, None, "b", "cpu", False)] == ["b"]
    with pytest.raises(SystemExit):
        select(cases, "nope", None, "cpu", False)


def test_a_foreign_program_is_right_only_on_exit_3_saying_nothing_failed(tmp_path):
    case = {"name": "p", "script": "programs/p.py", "kind": "none", "expect_exit": 3, "graphs": 2, "device": "cpu"}
    (tmp_path / "report.json").write_text(json.dumps(
        {"status": "nothing_failed", "graphs": [{"index": 0, "part": "forward"}, {"index": 1, "part": "backward"},
                                                {"index": 2, "part": "forward"}], "compiles": 2}))
    said = "Nothing failed: 3 compiled graph(s) matched eager."
    right = score(case, 3, 9.0, tmp_path, said)
    assert right.correct and right.graph_ok and right.expected == "nothing fails" and right.verified is None
    assert not score(case, 0, 9.0, tmp_path, said).correct  # any other exit is wrong
    assert not score(case, 1, 9.0, tmp_path, "minify failed").correct
    assert not score(case, 3, 9.0, tmp_path, "").correct  # exit 3 without saying so
    wrong = score(case, 3, 9.0, tmp_path, said + "\nTraceback (most recent call last):\n")
    assert not wrong.correct and "Traceback" in wrong.note
    assert not score({**case, "graphs": 3}, 3, 9.0, tmp_path, said).correct  # Dynamo graphs miscounted
    assert not score(case, None, 9.0, tmp_path, "").correct  # timed out
    totals = summary([right, wrong])
    assert (totals["correct"], totals["scored"], totals["programs"], totals["programs_correct"]) == (1, 2, 2, 1)
    assert totals["verified"] == 0 and totals["at_min_ops"] == 0  # the repro columns leave them out


def test_the_table_shows_a_foreign_program_with_its_expected_answer(tmp_path):
    from rich.console import Console

    from minifier.bench.table import print_table

    case = {"name": "some_program", "script": "programs/p.py", "kind": "none", "graphs": 1, "device": "cpu"}
    (tmp_path / "report.json").write_text(json.dumps({"status": "nothing_failed", "graph_count": 1}))
    console = Console(width=250, record=True, file=open(os.devnull, "w"))
    print_table([score(case, 3, 9.0, tmp_path, "Nothing failed: 1 compiled graph(s) matched eager.")], console, False)
    text = console.export_text()
    assert "some_program" in text and "nothing fails (exit 3)" in text and "exit 3, nothing failed" in text


@pytest.mark.slow
def test_sitecustomize_plants_the_case_bug_in_every_new_process(tmp_path):
    (tmp_path / "sitecustomize.py").write_text(sitecustomize_source(
        [parse_spec("neg:accuracy:double").to_dict(), parse_spec("lowering:sigmoid:accuracy:negate").to_dict()]))
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    code = ("import torch\nx = torch.randn(33)\n"
            "for f in (lambda t: torch.neg(t) + 1, lambda t: torch.sigmoid(t) * 2):\n"
            "    torch._dynamo.reset()\n"
            "    print(torch.allclose(torch.compile(f)(x), f(x)))\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                         cwd=tmp_path)
    assert out.stdout.split() == ["False", "False"], out.stdout + out.stderr[-2000:]


@pytest.mark.e2e
@pytest.mark.slow
def test_bench_scores_one_case_end_to_end(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    result = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "minifier", "bench", "--cases", "relu_accuracy", "--json",
                           str(result), "-o", str(tmp_path / "out")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    data = json.loads(result.read_text())
    (row,) = data["cases"]
    assert row["name"] == "relu_accuracy" and row["correct"] is True
    assert row["graph_ok"] and row["stage_ok"] and row["culprit_ok"] and row["verified"]
    assert row["ops_after"] >= row["min_ops"] and row["compiles"] > 0 and row["wall"] > 0
    assert data["summary"]["correct"] == 1
    assert "relu_accuracy" in proc.stdout  # the table
    assert (tmp_path / "out" / "relu_accuracy" / "report.json").exists()


def test_a_planted_case_that_left_no_report_is_scored_as_wrong(tmp_path):
    case = {"name": "c", "script": "c.py", "kind": "accuracy", "graphs": 1, "graph_index": 0, "stage": "inductor",
            "culprit_ops": ["relu"], "min_ops": 1, "device": "cpu"}
    crashed = score(case, 1, 5.0, tmp_path / "nothing-here")
    timed_out = score(case, None, 5.0, tmp_path / "nothing-here")
    assert crashed.note == "no report (exit 1)" and not crashed.correct
    totals = summary([crashed, timed_out])
    assert (totals["correct"], totals["scored"]) == (0, 2)


@pytest.mark.e2e
@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="on a GPU the case would run")
def test_the_json_names_the_device_of_the_cases_chosen_even_when_they_are_skipped(tmp_path):
    """--cases can pick CUDA cases whatever --device says: the JSON names the cases' device
    (it said "cpu", the option's default, for a Triton run on an H200), and is written for
    skipped cases too."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    result = tmp_path / "bench.json"
    proc = subprocess.run([sys.executable, "-m", "minifier", "bench", "--cases", "triton_relu_accuracy", "--json",
                           str(result), "-o", str(tmp_path / "out")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)
    data = json.loads(result.read_text())
    assert data["device"] == "cuda" and "gpu" not in data, proc.stdout[-2000:] + proc.stderr[-2000:]
    (row,) = data["cases"]
    assert row["name"] == "triton_relu_accuracy" and row["note"] == "skipped: needs CUDA"


def test_every_tool_the_bench_times_runs_with_inductors_graph_caches_off(monkeypatch):
    """minify's own processes never use the FX graph cache; a script alone that did would skip the
    compile minify must do, and the bench would time the cache, not the tool."""
    from minifier.bench.cases import project_env

    monkeypatch.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
    env = project_env()
    assert env["TORCHINDUCTOR_FX_GRAPH_CACHE"] == "0" and env["TORCHINDUCTOR_AUTOGRAD_CACHE"] == "0"
