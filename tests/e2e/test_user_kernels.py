"""User Triton kernels (issue 49): a bug in Inductor's launch of the user's own kernel ends in a
verified repro that still launches that kernel, its definition carried into repro.py, which
reproduces in a fresh process from another folder. Two forms: a `@triton.jit` kernel launched
from compiled code (Dynamo's triton_kernel_wrapper_mutation, compiler/user_kernels.py) and one
registered with `torch.library.triton_op` (compiler/custom_ops.py). The plant doubles the
kernel's float constant arguments in Inductor's lowering only. Needs a CUDA GPU:
`PYTHONPATH=. python -m pytest -m cuda tests`."""
import json

import pytest
import torch

from conftest import CORPUS, run_minify, run_repro_elsewhere

pytestmark = [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]


@pytest.mark.parametrize("script, launch", [
    ("leaky_relu_kernel.py", "torch.ops.higher_order.triton_kernel_wrapper_mutation("),
    ("leaky_relu_triton_op.py", "torch.ops.mylib.leaky_relu"),
])
def test_a_wrong_launch_of_the_users_kernel_ends_in_a_verified_repro_that_carries_it(tmp_path, script, launch):
    out = tmp_path / "out"
    proc = run_minify([str(CORPUS / "user_kernels" / script), "-o", str(out), "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["failure"]["kind"] == "accuracy" and report["verified"] is True, report["bugs"]
    assert report["ops_after"] <= 3, report["ops"]
    op = "triton_kernel_wrapper_mutation" if "higher_order" in launch else "leaky_relu"
    assert all(op in b["ops"] for b in report["bugs"] if b["verified"]), report["bugs"]  # no other verified bug
    source = (out / "repro.py").read_text()
    assert launch in source and "def leaky_relu_kernel(" in source and "@triton.jit" in source
    run = run_repro_elsewhere(out / "repro.py", tmp_path / "elsewhere")
    assert run.returncode == 1 and "REPRODUCED" in run.stdout, run.stdout + run.stderr
    control = run_repro_elsewhere(out / "repro.py", tmp_path / "elsewhere", dynamo=False)
    assert control.returncode == 0, control.stdout + control.stderr
