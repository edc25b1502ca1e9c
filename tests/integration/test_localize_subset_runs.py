"""Capture runs that compile only some graphs (`--only`), or none (`--eager`), and the saved
first outputs of each compiled function that the end-to-end check compares."""
import textwrap

import pytest
import torch

from minifier.capture.process import run_capture
from minifier.program.interaction import outputs_differ

SCRIPT = """\
import torch
torch.manual_seed(0)
w = torch.randn(16, 16)

@torch.compile
def step(x):
    y = torch.tanh(x @ w) * 0.5
    torch._dynamo.graph_break()
    return y.sigmoid() + x, y.sum()

print(step(torch.randn(4, 16))[1])
"""


@pytest.mark.slow
def test_eager_and_subset_runs(tmp_path, project_env, monkeypatch):
    script = tmp_path / "two_graphs.py"
    script.write_text(textwrap.dedent(SCRIPT))
    monkeypatch.setenv("PYTHONPATH", project_env["PYTHONPATH"])
    eager = run_capture(script, [], tmp_path / "eager", tmp_path / "eager.log", 600, eager=True)
    assert eager.script["status"] == "ok" and eager.script["graphs"] == 0 and eager.script["dynamo_graphs"] == 0
    only = run_capture(script, [], tmp_path / "only", tmp_path / "only.log", 600, only=["1"])
    assert only.script["status"] == "ok", (tmp_path / "only.log").read_text()[-2000:]
    assert only.script["dynamo_graphs"] == 2 and only.graphs == []  # Dynamo saw both; nothing recorded
    first = torch.load(only.calls_dir / "0.pt", weights_only=True)
    reference = torch.load(eager.calls_dir / "0.pt", weights_only=True)
    assert sorted(first) == ["out[0]", "out[1]"]
    torch.testing.assert_close(first, reference)
    assert outputs_differ(only, eager) is None
    # The check can fail: a changed output is reported with the function and the leaf.
    torch.save({**first, "out[1]": first["out[1]"] + 1}, only.calls_dir / "0.pt")
    found = outputs_differ(only, eager)
    assert found is not None and found.callable == 0 and "out[1]" in found.message
