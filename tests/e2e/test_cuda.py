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


def test_a_cuda_candidate_that_overruns_its_embedding_table_is_rejected_before_a_worker_runs_it():
    """Shrinking the table below the recorded indices would be a device-side assert in a worker
    (a dead CUDA context, a worker started again): the validator's CPU dry run says why first."""
    import torch.fx as fx

    from minifier.reduce.passes.shrink_shapes import resize
    from minifier.reduce.validate import validator

    def tower(ids, table, w):
        return torch.tanh(torch.nn.functional.embedding(ids, table) @ w)

    gm = fx.symbolic_trace(tower)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    values = {"ids": torch.randint(0, 50, (4, 6), device="cuda"), "table": torch.randn(50, 8, device="cuda"),
              "w": torch.randn(8, 8, device="cuda")}
    check = validator(values, base=gm)
    why = check(resize(gm, values, {50: 1}))
    assert why and why.startswith("an index out of range"), why
    assert check(resize(gm, values, {6: 1})) is None
    assert check(gm) is None


def test_a_patch_embedding_convolution_is_judged_without_tf32():
    """A ViT's patch embedding (a 16x16 convolution, stride 16) compiled: Inductor feeds cuDNN
    channels-last inputs and cuDNN may pick a TF32 kernel that eager's call does not; judged with
    TF32 off on both sides (compiler.context.without_tf32), the correct graph passes."""
    from compiler.oracle import check

    torch._dynamo.reset()
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 64, 16, stride=16).cuda()
    x = torch.randn(2, 3, 224, 224, device="cuda")
    with torch.no_grad():
        outcome = check(conv, [x], torch.compile(conv))
    assert outcome.status == "pass", outcome
