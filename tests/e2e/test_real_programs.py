"""Issue 22 end to end, on real reports (corpus/real/, torch 2.13 CPU): a program with bool-mask
indexing and `min(dim)` with indices, a program whose graph takes a ZeroTensor, and a uint8
program mixing abs, neg, cat and sum each end in a verified repro, with no traceback, and the
repro fails alone from another folder."""
import json
import subprocess
import sys

import pytest

from conftest import CORPUS, run_minify


@pytest.mark.slow
@pytest.mark.parametrize("name", ["wrong_index_bool_min", "crash_zerotensor", "wrong_value_uint8_abs"])
def test_real_program_ends_in_a_verified_repro(tmp_path, name):
    out = tmp_path / "out"
    proc = run_minify([str(CORPUS / "real" / f"{name}.py"), "-o", str(out), "--no-blame"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "reproduced" and report["verified"] is True
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    again = subprocess.run([sys.executable, "-I", str(out / "repro.py")], cwd=elsewhere, capture_output=True,
                           text=True, timeout=600)
    assert again.returncode == 1 and again.stdout.startswith("REPRODUCED"), again.stdout + again.stderr[-2000:]
