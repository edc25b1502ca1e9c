"""`minify` localizes: which graph (forward or backward, or a set of graphs that fail only
together), which stage, which intermediate, which kernel; and writes report.html."""
import json
import textwrap

import pytest

from conftest import CORPUS, run_minify


def _minify(script, out, *extra):
    proc = run_minify([str(script), "-o", str(out), "-q", *extra], cwd=out.parent)
    report = json.loads((out / "report.json").read_text()) if (out / "report.json").exists() else {}
    return proc, report


@pytest.mark.slow
def test_neg_tutorial_model_names_the_neg_node_and_its_cpp_kernel(tmp_path):
    proc, report = _minify(CORPUS / "neg_uint8_model.py", tmp_path / "out", "--no-verify")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert report["inductor_bug"] is True and report["stage"] == "inductor"
    (loc,) = report["localization"]
    assert loc["stages"]["inductor"].startswith("fail") and loc["stages"]["aot_eager"] == "pass"
    first = loc["first_divergent"][0]
    assert first["name"] == "neg" and first["metrics"]["mismatch_fraction"] > 0
    assert first["origin"]["code"] == "a = torch.neg(level)"
    (kernel,) = first["kernels"]
    assert kernel["name"].startswith("cpp_") and "neg" in kernel["name"]
    assert "2 * " in kernel["source"]  # the planted codegen of neg, in the kernel named for it
    page = (tmp_path / "out" / "report.html").read_text()
    assert "<svg" in page and f'id="g0-kernel-{kernel["name"]}"' in page
    assert "divergent node" in proc.stdout and "cpp_fused" in proc.stdout
    passes = report["passes"]  # per reduction pass, by its registered name: runs, compiles, successes
    assert passes["cut_at_divergence"]["successes"] == 1 and all(p["runs"] >= 1 for p in passes.values())
    assert sum(p["compiles"] for p in passes.values()) == report["reduce_compiles"]
    phases = report["phases"]  # where the time went, in pipeline order (they overlap: no sum check)
    assert list(phases)[:4] == ["capture", "confirmation", "stage checks", "reduction"] and "localization" in phases
    assert all(0 < seconds <= report["wall_seconds"] for seconds in phases.values()) and "phases" in proc.stdout


@pytest.mark.slow
def test_three_graph_program_localizes_to_the_mixer_graph(tmp_path):
    proc, report = _minify(CORPUS / "multigraph_relu_accuracy.py", tmp_path / "out", "--no-verify")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert report["failing_graphs"] == [1]
    (loc,) = report["localization"]
    assert loc["graph"] == 1
    assert [d["op"] for d in loc["first_divergent"]] == ["relu"]
    assert any("relu" in k["name"] for k in loc["first_divergent"][0]["kernels"])


@pytest.mark.slow
def test_bug_only_in_the_backward_graph(tmp_path):
    proc, report = _minify(CORPUS / "backward_sub_policy.py", tmp_path / "out")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = {g["index"]: g for g in report["graphs"]}
    failing = rows[report["failing_graph"]]
    assert failing["part"] == "backward" and failing["dynamo_graph"] == 0
    assert not rows[0]["failing"] and rows[0]["part"] == "forward"
    assert report["ops"] == ["sub"] and report["verified"] is True
    assert all(d["op"] == "sub" for d in report["first_divergent_nodes"])


@pytest.mark.slow
def test_two_graphs_that_fail_only_together(tmp_path):
    proc, report = _minify(CORPUS / "interaction_tanh_pair.py", tmp_path / "out")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert report["status"] == "program" and not any(g["failing"] for g in report["graphs"])
    assert report["layer"]["backend"] is None  # eager, aot_eager and decompositions all pass: the compiler's
    assert report["program"]["verified"] and report["program"]["lines_after"] < report["program"]["lines_before"]
    assert "out of scope" not in proc.stdout
    inter = report["interaction"]
    assert inter["graphs"] == [0, 2] and inter["end_to_end"]["how"] == "outputs"
    ran = {tuple(r["keys"]): r["fails"] for r in inter["runs"]}
    assert ran[("0", "2")] is True and ran[("0",)] is False and ran[("2",)] is False  # each alone passes
    assert "fail only together" in (tmp_path / "out" / "report.html").read_text()


@pytest.mark.slow
def test_broken_decomposition_is_reported_at_its_stage(tmp_path):
    script = tmp_path / "decomp.py"
    script.write_text(textwrap.dedent("""\
        import torch, torch.nn as nn, torch.nn.functional as F
        from compiler import inject
        inject.apply(inject.parse_spec("decomposition:gelu:accuracy:double"))

        class Block(nn.Module):
            def __init__(self, dim=32):
                super().__init__()
                self.norm, self.fc1, self.fc2 = nn.LayerNorm(dim), nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

            def forward(self, x):
                return x + self.fc2(F.gelu(self.fc1(self.norm(x))))

        torch.manual_seed(0)
        with torch.no_grad():
            print(torch.compile(nn.Sequential(Block(), Block()).eval())(torch.randn(4, 32)).sum())
        """))
    proc, report = _minify(script, tmp_path / "out", "--no-verify")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert report["stage"] == "aot_eager_decomp_partition" and report["inductor_bug"] is False
    stages = report["localization"][0]["stages"]
    assert stages["aot_eager"] == "pass" and stages["aot_eager_decomp_partition"].startswith("fail")
    assert "not an Inductor bug" in proc.stdout.replace("\n", " ")
