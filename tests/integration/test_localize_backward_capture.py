"""The capture records AOTAutograd's backward graph as a graph of its own, checked like any
other, and replayable alone through torch.compile (aten code)."""
import json
import textwrap

import pytest

from compiler import inject
from compiler.graph_code import module_from_source
from compiler.stages import CompileSpec, compile_for_stage, fresh_compile_state
from minifier.capture.process import run_capture
from compiler.oracle import check
from repro.inputs import load_inputs

SUB_BUG = inject.Injection("sub", form="add_one", paths=("cpp", "cppvec"))

SCRIPT = """\
import torch, torch.nn as nn
from compiler.inject import inject_bug
inject_bug("sub", form="add_one", paths=("cpp", "cppvec"))
torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
compiled = torch.compile(model)
loss = compiled(torch.randn(32, 8)).mean()  # forward: linear, tanh, mean; no subtraction
loss.backward()  # tanh' = 1 - y*y: only the backward graph subtracts
"""


def _replay_fails(folder, bug) -> bool:
    model = module_from_source((folder / "graph.py").read_text())
    inputs = load_inputs(folder / "inputs.pt")
    spec = CompileSpec(grad_enabled=False)
    with inject.injected(*bug), fresh_compile_state(spec):
        outcome = check(model, inputs, compile_for_stage(model, "inductor", spec))
    return outcome.status == "fail" and outcome.kind == "accuracy"


@pytest.mark.slow
def test_backward_graph_is_recorded_checked_and_replayable(tmp_path, project_env, monkeypatch):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(SCRIPT))
    monkeypatch.setenv("PYTHONPATH", project_env["PYTHONPATH"])
    cap = run_capture(script, [], tmp_path / "cap", tmp_path / "cap.log", timeout=600)
    assert cap.script["status"] == "ok", (tmp_path / "cap.log").read_text()[-3000:]
    forward, backward = cap.graphs
    assert (forward.part, forward.key, forward.failure) == ("forward", "0", None)
    assert (backward.part, backward.key, backward.dynamo_graph) == ("backward", "0.bw", 0)
    assert backward.record["forward_index"] == 0
    assert backward.failure and backward.failure["kind"] == "accuracy"
    assert backward.replayable
    source = (backward.folder / "graph.py").read_text()
    assert "torch.ops.aten.sub" in source and "tangents_1" in source
    rows = json.loads((backward.folder / "nodes.json").read_text())
    subs = [r for r in rows if r["op"] == "sub"]
    assert subs and all(r.get("gradient_of") for r in subs)  # traced back to the forward op (tanh)
    # Replayed alone through torch.compile, the aten graph shows the bug, and only with it.
    assert _replay_fails(backward.folder, [SUB_BUG])
    assert not _replay_fails(backward.folder, [])
