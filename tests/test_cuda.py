"""The whole tool on CUDA: Triton kernels, device-side asserts, several graphs (skipped without a GPU).

Run on a GPU machine with `PYTHONPATH=. python -m pytest -m cuda tests`."""
import json
import subprocess
import sys

import pytest
import torch

from conftest import CORPUS, run_minify

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

CASES = {  # script: (kind, failing graph)
    "triton_relu_compile_error": ("compile_error", 0),
    "triton_relu_runtime_error": ("runtime_error", 0),
    "triton_relu_accuracy": ("accuracy", 0),
    "triton_relu_multigraph": ("accuracy", 1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_triton_relu_bug_minifies_to_relu_with_a_verified_gpu_repro(name, tmp_path):
    kind, graph = CASES[name]
    out = tmp_path / "out"
    proc = run_minify([str(CORPUS / f"{name}.py"), "-o", str(out), "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["failure"]["kind"] == kind and report["failing_graph"] == graph
    assert report["ops"] == ["relu"] and report["verified"] is True
    if kind == "runtime_error":  # after a device-side assert, each blame probe needs a fresh process
        blame = json.loads((out / "blame.json").read_text())
        assert any(f["what"] == "lowering" and "relu" in f["finding"] for f in blame["blame"]), blame
        assert all(r["verdict"] != "error" for r in blame["ruled_out"]), blame["ruled_out"]
    manifest = json.loads((out / "repro.json").read_text())
    assert manifest["device"] == "cuda" and manifest["stage"] == "inductor"
    again = subprocess.run([sys.executable, "repro.py"], cwd=out, capture_output=True, text=True, timeout=600)
    assert again.returncode == 1 and again.stdout.startswith("REPRODUCED"), again.stdout + again.stderr
    print(f"{name}: {report['compiles']} compiles, {report['wall_seconds']} s")
