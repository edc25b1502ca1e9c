"""AOTInductor on the GPU (issue 49 asks it to work there as on the CPU): an exported CUDA model
compiled with aoti_compile_and_package whose package is wrong (a planted Triton bug in the top
graph; a planted lowering bug inside a torch.cond branch) ends in a verified repro of at most
three ops holding the culprit, which reproduces in a fresh process from another folder and
passes with nothing compiled (repro.verify's control, which turns AOTInductor off too). The cases are corpus/aoti/cuda/. Needs a CUDA GPU:
`PYTHONPATH=. python -m pytest -m cuda tests`."""
import json

import pytest
import torch

from conftest import CORPUS, run_minify, run_repro_elsewhere
from repro.verify import run_control

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.mark.parametrize("script, culprit", [("relu_accuracy_mlp.py", "relu"),
                                             ("cond_branch_sigmoid_accuracy.py", "sigmoid")])
def test_a_wrong_cuda_package_ends_in_a_verified_repro_of_its_culprit(tmp_path, script, culprit):
    out = tmp_path / "out"
    proc = run_minify([str(CORPUS / "aoti" / "cuda" / script), "-o", str(out), "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["verified"] is True and report["ops_after"] <= 3, report["bugs"]
    assert culprit in report["ops"], report["ops"]
    source = (out / "repro.py").read_text()
    assert "aoti_compile_and_package" in source and "device='cuda'" in source
    run = run_repro_elsewhere(out / "repro.py", tmp_path / "elsewhere")
    assert run.returncode == 1 and "REPRODUCED" in run.stdout, run.stdout + run.stderr
    control = run_control(out / "repro.py", timeout=300)  # nothing compiled: the package's program runs eagerly
    assert control.reproduced and control.line.startswith("NOT REPRODUCED"), control.line
