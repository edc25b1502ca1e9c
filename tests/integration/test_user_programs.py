"""Programs not written for the tool: a training loop with a decorator, dynamic shapes and
compile options (Dynamo restarts its analysis inside the backend here; that is not a failure)."""
import json
import textwrap

import pytest

from conftest import run_minify


@pytest.mark.e2e
@pytest.mark.slow
@pytest.mark.parametrize("early", ["off", "on"])  # on: graphs checked while the script runs (and restarts)
def test_training_loop_with_dynamic_shapes(tmp_path, early):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""\
        import torch, torch.nn as nn
        torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
        torch.manual_seed(0)
        model = nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 4))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)

        @torch.compile(dynamic=True, options={"max_autotune": False})
        def step(x, y):
            return nn.functional.cross_entropy(model(x), y)

        for i in range(3):
            x, y = torch.randn(8 + i, 16), torch.randint(4, (8 + i,))
            loss = step(x, y)
            loss.backward()
            opt.step()
            opt.zero_grad()
        """))
    proc = run_minify([str(script), "-q", "--early-checks", early], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "minify-out" / "train" / "report.json").read_text())
    assert report["ops"] == ["relu"] and report["verified"] is True
    repro = (tmp_path / "minify-out" / "train" / "repro.py").read_text()
    assert "dynamic=True" in repro and "options={'max_autotune': False}" in repro  # torch.compile(f, ...)


@pytest.mark.slow
def test_a_compile_error_under_dynamic_shapes_keeps_its_inputs(tmp_path):
    """A graph that fails to compile never runs, so its inputs are saved from what Dynamo hands
    the backend: under dynamic shapes that includes symbolic sizes, saved as their values."""
    from minifier.capture.process import run_capture

    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""\
        import torch
        fn = torch.compile(lambda x: torch.exp(-x.abs()).sum(dim=1), dynamic=True)
        print(fn(torch.randn(5, 7)))
        """))
    capture = run_capture(script, [], tmp_path / "capture", tmp_path / "capture.log", timeout=600,
                          injections=["exp:compile_error"])
    graph = capture.graphs[0]
    assert graph.failure["kind"] == "compile_error"
    assert graph.replayable, graph.record.get("unsupported")
