"""Issue 21 end to end, on real reports (corpus/real/oracle_*.py): a signed-zero, a NaN-for-a-number
and a strides bug each end in a verified one-file repro that names the op; numerics cases end
in the numerics verdict with their evidence, never in a repro or the interaction message."""
import json
import subprocess
import sys

import pytest

from conftest import CORPUS, run_minify

REAL = CORPUS / "real"


def minify(tmp_path, name, *flags):
    out = tmp_path / "out"
    proc = run_minify([str(REAL / f"{name}.py"), "-o", str(out), "--no-blame", *flags], cwd=tmp_path)
    report = json.loads((out / "report.json").read_text())
    return proc, report, out


@pytest.mark.slow
@pytest.mark.parametrize("name, rung, op, says", [
    ("oracle_minimum_signed_zero", "signed_zero", "minimum", "the sign of zero differs"),
    ("oracle_var_mean_empty_nan", "nan_inf", "var_mean", "compiled 0.0, eager nan"),
    ("oracle_copysign_transposed_strides", "layout", "copysign", "strides (2, 1), eager's (1, 2)"),
])
def test_real_bug_ends_in_a_one_file_repro_naming_the_op(tmp_path, name, rung, op, says):
    proc, report, out = minify(tmp_path, name)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert report["failure"]["rung"] == rung and report["ops"] == [op] and report["verified"] is True
    assert f"{rung}: " in proc.stdout  # the console names the rung
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".py") == ["repro.py"]  # one file, no sidecar
    source = (out / "repro.py").read_text()
    assert len(source.splitlines()) < 42 and f"torch.{op}(" in source and f" in {op} " in source.splitlines()[0]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repro = subprocess.run([sys.executable, "-I", str(out / "repro.py")], cwd=elsewhere, capture_output=True,
                           text=True, timeout=600)
    assert repro.returncode == 1 and len(repro.stdout.splitlines()) == 1, repro.stdout + repro.stderr[-2000:]
    assert repro.stdout.startswith("REPRODUCED: ") and says in repro.stdout
    assert len((out / "issue.md").read_text().split("### Versions")[0].encode()) < 3500  # collect_env's report after


@pytest.mark.slow
@pytest.mark.parametrize("name, evidence, hint", [
    ("oracle_numerics_fp16_cast_add", "differs from eager within tolerance", True),
    ("oracle_numerics_bf16_division", "vs fp64, compiled", True),
    ("oracle_numerics_fp16_var_rsqrt_nan", "as the fp64 reference does", True),
    ("oracle_numerics_sqrt_nan_sign", "only in the sign of a NaN", False),
])
def test_numerics_case_gets_the_numerics_verdict_not_a_repro(tmp_path, name, evidence, hint):
    proc, report, out = minify(tmp_path, name)
    assert proc.returncode == 5, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert report["status"] == "numerics" and report["numerics"]["verdict"] == "numerics, not a miscompile"
    assert not (out / "repro.py").exists() and "compiled together" not in proc.stdout
    assert any(evidence in line for line in report["numerics"]["evidence"]), report["numerics"]["evidence"]
    hints = [h["text"] for h in report["numerics"]["hints"]]
    assert bool(hints) == hint and all("emulate_precision_casts = True" in h for h in hints)


@pytest.mark.slow
def test_ignored_signed_zero_leaves_nothing_failed(tmp_path):
    proc, report, _ = minify(tmp_path, "oracle_minimum_signed_zero", "--ignore", "signed-zero,layout")
    assert proc.returncode == 3 and report["status"] == "nothing_failed", proc.stdout[-3000:]
    bad = run_minify([str(REAL / "oracle_minimum_signed_zero.py"), "--ignore", "values"], cwd=tmp_path)
    assert bad.returncode == 2 and "cannot ignore 'values'" in bad.stderr  # one-line errors go to stderr
