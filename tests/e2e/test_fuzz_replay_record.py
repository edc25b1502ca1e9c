"""`minify fuzz --replay` never rewrites the campaign's record (fuzz.json, fuzz.html): it writes
replay.json and replay.html beside it, and options other than the campaign's are reported,
not crashed on (they ended in `internal error: SkipTest`, exit 1: the code of "findings")."""
from __future__ import annotations

import json

import pytest

from conftest import run_minify
from minifier.exit_codes import EXIT_OK


@pytest.mark.slow
def test_replay_writes_its_own_record_and_reports_other_options(tmp_path):
    out = tmp_path / "campaign"
    out.mkdir()
    campaign = {"seed": 0, "ops": ["neg"], "dtypes": ["float32"], "device": "cpu", "injections": [], "masks": [],
                "failures": [{"number": 1, "key": "accuracy@inductor [neg]", "repro": str(out / "bug-1" / "repro.py"),
                              "blame": "lowering neg"}]}
    (out / "fuzz.json").write_text(json.dumps(campaign, indent=1))
    (out / "fuzz.html").write_text("<h1>minify fuzz: 1 finding(s)</h1>")
    (out / "bug-1").mkdir()
    (out / "bug-1" / "repro.py").write_text("print('the campaign's repro')\n")
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    proc = run_minify(["fuzz", "--replay", "--ops", "abs", "--dtypes", "float32", "--no-reduce", "-q",
                       "--max-examples", "3", "-o", str(out)], cwd=tmp_path, timeout=600)
    console = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_OK, console[-3000:]
    assert "internal error" not in console and "Traceback" not in console
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file() and p.name in before} == before
    assert (out / "bug-1" / "repro.py").exists()  # the campaign's repros stay
    replay = json.loads((out / "replay.json").read_text())
    assert replay["stopped"] == "replayed" and replay["failures"] == []
    assert any(d.startswith("--ops ['abs'], not the campaign's ['neg']") for d in replay["differences"]), replay
    assert "not the campaign's ['neg']" in console
    assert (out / "replay.html").is_file()
