"""The program-level comparisons honour `--ignore signed-zero`: a compiled function whose first
outputs equal eager's in every value but the sign of some zeros differs from eager on the
signed_zero rung, and with that rung ignored it does not; so does the program that judges
itself (the program repro's check, minifier.program.instrument)."""
import subprocess
import sys
import textwrap

import pytest
import torch

from compiler.judging import Judging
from compiler.rungs import parse_ignore
from minifier.capture.process import run_capture
from minifier.program.instrument import instrument, render
from minifier.program.interaction import end_to_end_failure

# -0.0 + 0.0 is +0.0 in eager; Inductor folds the add of zeros away, -0.0 kept. The graph passes its
# own check (an add is not exact, so its zeros' signs are not judged there): only the program differs.
SCRIPT = """\
import torch

@torch.compile
def shift(x):
    return torch.add(x * 2, torch.zeros(4))

print(shift(torch.tensor([-0.0, 1.0, -0.0, 2.0])))
"""


@pytest.mark.slow
def test_signed_zero_at_the_program_level(tmp_path, project_env, monkeypatch):
    script = tmp_path / "signed_zero.py"
    script.write_text(textwrap.dedent(SCRIPT))
    monkeypatch.setenv("PYTHONPATH", project_env["PYTHONPATH"])
    eager = run_capture(script, [], tmp_path / "eager", tmp_path / "eager.log", 600, eager=True)
    compiled = run_capture(script, [], tmp_path / "compiled", tmp_path / "compiled.log", 600)
    assert compiled.script["status"] == "ok", (tmp_path / "compiled.log").read_text()[-2000:]
    assert [g.failure for g in compiled.graphs] == [None]  # the graph alone matches eager
    first = torch.load(compiled.calls_dir / "0.pt", weights_only=True)["out"]
    reference = torch.load(eager.calls_dir / "0.pt", weights_only=True)["out"]
    assert torch.equal(first, reference) and not torch.equal(first.signbit(), reference.signbit())

    found = end_to_end_failure(compiled, eager, Judging())
    assert found is not None and found.how == "outputs" and found.callable == 0
    assert [m["rung"] for m in found.metrics if not m["ok"]] == ["signed_zero"]
    assert "sign of zero" in found.message
    assert end_to_end_failure(compiled, eager, Judging(ignore=parse_ignore("signed-zero"))) is None


@pytest.mark.slow
def test_signed_zero_in_the_program_that_judges_itself(tmp_path):
    ends = {}
    for name, judging in (("judged", Judging()), ("ignored", Judging(ignore=parse_ignore("signed-zero")))):
        path = tmp_path / f"{name}.py"
        path.write_text(render(instrument(textwrap.dedent(SCRIPT)), judging=judging))
        ends[name] = subprocess.run([sys.executable, str(path)], cwd=tmp_path, capture_output=True, text=True,
                                    timeout=600)
    assert ends["judged"].returncode == 1, ends["judged"].stderr[-2000:]
    assert "torch.compile differs from eager: the sign of zero differs" in ends["judged"].stderr
    assert ends["ignored"].returncode == 0, ends["ignored"].stderr[-2000:]
