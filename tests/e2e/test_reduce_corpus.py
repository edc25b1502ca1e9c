"""`minify` end to end on corpus cases: single-op bugs reduce to exactly the buggy op on the
smallest inputs that still fail (one element: none of these bugs depends on size), and the
repro does not depend on the number of workers."""
import importlib.util
import json

import pytest
import torch

from conftest import CORPUS, manifest, run_minify

# The cases whose bug needs one op and any single element (checked against the manifest below).
SINGLE_OP = ["relu_accuracy", "relu_compile_error", "relu_runtime_error", "neg_float_model", "neg_uint8_model",
             "multigraph_relu_accuracy", "relu_accuracy_mlp90"]
CASES = {c["name"]: c for c in manifest()}


def _repro_inputs(out) -> list:
    """The inputs repro.py feeds its graph (inline or loaded from the file beside it)."""
    spec = importlib.util.spec_from_file_location("written_repro", out / "repro.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.make_inputs("cpu")


def _numel(values) -> int:
    return sum(v.numel() for v in values if isinstance(v, torch.Tensor))


# Every run covers these two; the others also run in test_corpus_end_to_end, so here with -m corpus.
DEFAULT = {"relu_accuracy_mlp90", "neg_float_model"}


@pytest.mark.slow
@pytest.mark.parametrize("name", [pytest.param(n, marks=[] if n in DEFAULT else [pytest.mark.corpus])
                                  for n in SINGLE_OP])
def test_single_op_bug_reduces_to_the_op_on_one_element(name, tmp_path):
    case = CASES[name]
    assert case["min_ops"] == 1
    out = tmp_path / "out"
    proc = run_minify([str(CORPUS / case["script"]), "-o", str(out), "-q"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["ops"] == case["culprit_ops"]
    assert _numel(_repro_inputs(out)) == 1
    assert report["verified"] is True


@pytest.mark.slow
def test_one_worker_and_two_give_the_same_repro(tmp_path):
    script = CORPUS / CASES["relu_compile_error"]["script"]
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"j{jobs}"
        proc = run_minify([str(script), "-o", str(out), "-q", "-j", jobs], cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        outs.append(out)
    assert (outs[0] / "repro.py").read_bytes() == (outs[1] / "repro.py").read_bytes()
    first, second = _repro_inputs(outs[0]), _repro_inputs(outs[1])
    assert len(first) == len(second) and all(torch.equal(a, b) for a, b in zip(first, second))
