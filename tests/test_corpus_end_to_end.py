"""`minify` on every corpus case: right graph, right kind, the buggy op, a verified repro."""
import hashlib
import json
import subprocess
import sys

import pytest

from conftest import CORPUS, manifest, run_minify


@pytest.mark.slow
@pytest.mark.parametrize("case", manifest(), ids=lambda c: c["name"])
def test_minify_corpus_case(case, tmp_path):
    script = CORPUS / case["script"]
    before = hashlib.sha256(script.read_bytes()).hexdigest()
    out = tmp_path / "out"
    proc = run_minify([str(script), "-o", str(out), "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["graph_count"] == case["graphs"]
    assert report["failing_graph"] == case["graph_index"]
    assert report["failure"]["kind"] == case["kind"]
    assert report["stage"] == case["stage"]
    assert set(case["culprit_ops"]) & set(report["ops"]), report["ops"]
    assert report["ops_after"] <= 3
    assert report["verified"] is True
    # The repro stands alone: a fresh python, another directory, nothing of this project.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repro = subprocess.run([sys.executable, "-I", str(out / "repro.py")], cwd=elsewhere, capture_output=True,
                           text=True, timeout=600)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert repro.stdout.strip().splitlines()[-1].startswith("REPRODUCED")
    assert hashlib.sha256(script.read_bytes()).hexdigest() == before
    assert not (CORPUS / "minify-out").exists()
