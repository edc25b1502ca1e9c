"""CUDA graphs (issue 49): a bug only a replay shows is found at the call it shows, reduced with the
call sequence kept, blamed on CUDA graphs, and its repro replays it in a fresh process.

The case is corpus/cudagraphs/stale_inputs_mlp.py (mode="reduce-overhead", a planted replay that
never copies the new inputs). Needs a CUDA GPU: `PYTHONPATH=. python -m pytest -m cuda tests`."""
import json

import pytest
import torch

from conftest import CORPUS, run_minify, run_repro_elsewhere

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


def test_a_stale_input_replay_ends_in_a_verified_repro_that_keeps_the_call_sequence(tmp_path):
    out = tmp_path / "out"
    proc = run_minify([str(CORPUS / "cudagraphs" / "stale_inputs_mlp.py"), "-o", str(out), "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["failure"]["kind"] == "accuracy" and report["verified"] is True
    assert report["ops_after"] <= 3, report["ops"]
    bug = report["bugs"][0]
    assert bug["cudagraphs"].startswith("fails only with CUDA graphs"), bug
    graph = next(g for g in report["graphs"] if g["index"] == report["failing_graph"])
    source = (out / "repro.py").read_text()
    assert "primed(torch.compile(f, mode='reduce-overhead'), " in source  # the calls before the judged one
    assert json.loads((out / "repro.json").read_text())["check"]["calls_before"] >= 2, graph
    run = run_repro_elsewhere(out / "repro.py", tmp_path / "elsewhere")
    assert run.returncode == 1 and "REPRODUCED" in run.stdout, run.stdout + run.stderr
    control = run_repro_elsewhere(out / "repro.py", tmp_path / "elsewhere", dynamo=False)
    assert control.returncode == 0, control.stdout + control.stderr
