"""`minify` on every corpus case: right graph, right kind, the buggy op, a verified repro."""
import hashlib
import json
import subprocess
import sys

import pytest
import torch

from conftest import CORPUS, manifest, run_minify
from minifier.bench import dynamo_graph_count, failing_dynamo_graph


# The cases every test run covers: one per kind and per place a bug can live. The whole corpus
# runs with `python -m pytest -m corpus tests` (and, scored, with `minify bench --all`).
CI_CASES = {"neg_uint8_model", "relu_compile_error", "relu_runtime_error", "multigraph_relu_accuracy",
            "exp_runtime_error_vec", "lowering_sigmoid_gated_mlp", "decomp_layer_norm_mlp",
            "fusion_sigmoid_mul_glu", "indexing_embedding_recsys"}


def marks(case: dict) -> list:
    found = [pytest.mark.slow]
    if case["name"] not in CI_CASES:
        found.append(pytest.mark.corpus)
    if case["device"] == "cuda":
        found += [pytest.mark.cuda, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")]
    return found


# Every planted case ends in a verified repro; a `none` entry (nothing fails, exit 3) has none to
# check, and the foreign programs that are such entries run in tests/test_foreign_programs.py.
@pytest.mark.parametrize("case", [pytest.param(c, marks=marks(c), id=c["name"]) for c in manifest()
                                  if c["kind"] != "none"])
def test_minify_corpus_case(case, tmp_path):
    script = CORPUS / case["script"]
    before = hashlib.sha256(script.read_bytes()).hexdigest()
    out = tmp_path / "out"
    proc = run_minify([str(script), "-o", str(out), "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    # The manifest counts Dynamo graphs; the report also lists each backward graph it captured.
    assert dynamo_graph_count(report) == case["graphs"]
    assert failing_dynamo_graph(report) == case["graph_index"]
    part = next(g["part"] for g in report["graphs"] if g["index"] == report["failing_graph"])
    assert part == ("backward" if "backward" in case["tags"] else "forward")
    assert report["failure"]["kind"] == case["kind"]
    assert report["stage"] == case["stage"]
    assert set(case["culprit_ops"]) & set(report["ops"]), report["ops"]
    assert report["ops_after"] <= max(3, case["min_ops"])
    assert report["verified"] is True
    if case["device"] == "cuda":
        cuda_checks(case, out)
    # The repro stands alone: a fresh python, another directory, nothing of this project.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    repro = subprocess.run([sys.executable, "-I", str(out / "repro.py")], cwd=elsewhere, capture_output=True,
                           text=True, timeout=600)
    assert repro.returncode == 1, repro.stdout + repro.stderr
    assert repro.stdout.strip().splitlines()[-1].startswith("REPRODUCED")
    if report["ops_after"] == 1:  # a one-op bug: one short file to paste into an issue
        assert sorted(p.name for p in out.glob("*.py")) == ["repro.py"]
        lines = (out / "repro.py").read_text().splitlines()
        assert len(lines) - planted_lines(lines) < 42, "\n".join(lines)  # 40, and the in-process compile line
    assert hashlib.sha256(script.read_bytes()).hexdigest() == before
    assert not (CORPUS / "minify-out").exists()


def cuda_checks(case: dict, out) -> None:
    """A GPU case's repro runs on CUDA; a device-side assert names the kernel it came from; after
    it each blame experiment needs a fresh process, and blame still names the lowering."""
    manifest = json.loads((out / "repro.json").read_text())
    assert manifest["device"] == "cuda" and manifest["stage"] == "inductor"
    if case["kind"] == "runtime_error":
        # the asserting Triton kernel was named, and its nodes (where the reduction cut first) are in the report
        report = json.loads((out / "report.json").read_text())
        assert report["failure"].get("kernel_nodes"), report["failure"]
        blame = json.loads((out / "blame.json").read_text())
        assert any(f["what"] == "lowering" and set(case["culprit_ops"]) & set(f["finding"].replace(",", " ").split())
                   for f in blame["blame"]), blame
        assert all(r["verdict"] != "error" for r in blame["ruled_out"]), blame["ruled_out"]


def planted_lines(lines: list[str]) -> int:
    """Lines of the block that plants the corpus case's bug (a real bug's repro has none)."""
    start = next((i for i, line in enumerate(lines) if line.startswith("# Planted on purpose")), None)
    if start is None:
        return 0
    end = next(i for i, line in enumerate(lines) if "enable_autograd_cache = False" in line)
    return end - start + 1
