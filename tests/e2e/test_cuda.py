"""The whole tool on CUDA: Triton kernels, device-side asserts, several graphs (skipped without a GPU).

Run on a GPU machine with `PYTHONPATH=. python -m pytest -m cuda tests`."""
import pytest
import torch

pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]

# The Triton corpus cases (minify on each, its repro run again elsewhere, blame after a device assert)
# run in tests/e2e/test_corpus_end_to_end.py, marked cuda there.


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
