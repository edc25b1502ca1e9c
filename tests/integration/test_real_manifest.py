"""corpus/real/manifest.json (issue 43): public torch.compile reports of 2025-2026 that still fail
on torch 2.13 CPU, and user mistakes where eager fails too, each with the answer minify should
give. The default run only checks the manifest itself; `python -m pytest -m corpus
tests/test_real_manifest.py` runs minify on every case (2-4 minutes each on 2 shared cores)."""
import ast
import json
import re

import pytest
from conftest import CORPUS, run_minify

from minifier.exit_codes import EXIT_CODES
from minifier.program.layers import COMPILER

REAL = CORPUS / "real"
KINDS = {"accuracy", "compile_error", "crash", "dynamo", "numerics", "user_error"}
LAYERS = {"Dynamo", "AOTAutograd", "Inductor"}
# A graph's repro names the first stage that fails (a program's, the layer): the same layers
STAGE_LAYERS = {"eager": "Dynamo", "aot_eager": "AOTAutograd", "inductor": "Inductor"}


def real_manifest() -> list[dict]:
    return json.loads((REAL / "manifest.json").read_text())


def test_real_manifest_names_runnable_scripts_with_an_answer():
    cases = real_manifest()
    assert len({c["script"] for c in cases}) == len(cases), "a script is listed twice"
    for case in cases:
        assert {"script", "issue", "kind", "expected", "forms", "why"} <= case.keys(), case
        source = (REAL / case["script"]).read_text()
        ast.parse(source, filename=case["script"])
        assert "torch.compile" in source, case["script"]
        assert case["kind"] in KINDS, case
        expected = case["expected"]
        assert expected["exit"] in EXIT_CODES, case
        assert (case["kind"] == "user_error") == (expected["exit"] == 2), case
        if expected["exit"] == 0:  # a verified repro: it must say of what
            assert expected.get("ops") or expected.get("layer") in LAYERS, case
        assert expected.get("layer", "Inductor") in LAYERS, case
        assert case["issue"] is None or re.fullmatch(r"https://github\.com/pytorch/pytorch/issues/\d+", case["issue"])
        if case["script"].startswith("issue_"):
            assert case["issue"].endswith("/" + case["script"].split("_")[1]), case
        assert case["forms"] and case["why"].strip(), case


def test_every_issue_or_control_script_is_in_the_real_manifest():
    listed = {c["script"] for c in real_manifest()}
    on_disk = {p.name for p in REAL.glob("*.py") if p.name.startswith(("issue_", "control_"))}
    assert on_disk == listed


def answer_matches(case: dict, code: int, report: dict) -> str:
    """Why minify's answer is not the manifest's ('' when it is)."""
    expected = case["expected"]
    if code != expected["exit"]:
        return f"exit {code}, expected {expected['exit']}"
    if code != 0:
        return ""
    program = report.get("program") or {}  # a failure of the whole program (e.g. Dynamo's)
    if report.get("verified") is not True and program.get("verified") is not True:
        return "repro not verified"
    layer = (report.get("layer") or program.get("layer") or {}).get("name") or STAGE_LAYERS.get(report.get("stage"))
    if expected.get("layer") in ("Dynamo", "AOTAutograd"):
        return "" if layer == expected["layer"] else f"layer {layer}, expected {expected['layer']}"
    if layer not in (None, "Inductor", COMPILER):  # a program repro blamed on a layer before Inductor
        return f"layer {layer}, expected Inductor"
    if expected.get("ops") and not set(expected["ops"]) & set(report.get("ops") or []):
        return f"ops {report.get('ops')}, expected one of {expected['ops']}"
    return ""


def test_a_graph_repro_names_its_layer_by_the_first_stage_that_fails():
    case = {"expected": {"exit": 0, "ops": ["unfold", "add_"], "layer": "AOTAutograd"}}
    graph = {"verified": True, "stage": "aot_eager", "ops": ["unfold", "add_"]}  # as issue_198102's report
    assert answer_matches(case, 0, graph) == ""
    assert answer_matches(case, 0, {**graph, "stage": "inductor"}) == "layer Inductor, expected AOTAutograd"
    program = {"program": {"verified": True}, "layer": {"name": "Dynamo"}}
    assert answer_matches(case, 0, program) == "layer Dynamo, expected AOTAutograd"
    inductor = {"expected": {"exit": 0, "layer": "Inductor"}}  # a program repro: no ops to name
    assert answer_matches(inductor, 0, program) == "layer Dynamo, expected Inductor"
    assert answer_matches(inductor, 0, {**program, "layer": {"name": COMPILER}}) == ""


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("case", [pytest.param(c, id=c["script"][:-3]) for c in real_manifest()])
def test_minify_gives_the_real_manifest_answer(case, tmp_path):
    out = tmp_path / "out"
    proc = run_minify([str(REAL / case["script"]), "-o", str(out), "--max-time", "300"], cwd=tmp_path)
    console = proc.stdout + proc.stderr
    assert "Traceback" not in console, console[-3000:]
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    assert not answer_matches(case, proc.returncode, report), answer_matches(case, proc.returncode, report)
