"""A graph that fails in the script but passes when replayed alone (issue 22, item 1).

Two programs, each a real torch.compile run with a bug that only the script's own run shows:
- compiled with symbolic sizes (`mark_dynamic`) and a lowering that is wrong only for symbolic
  sizes: the replay with the numbers of one call passes; minify tries the one difference it can
  vary (dynamic=True), says in one line that it is the one that matters, and reduces with it;
- a post-grad pass the script installs as a closure (Inductor config that cannot be carried to
  another process): no replay can show it, so minify falls back to reducing the program itself.
"""
import json
import subprocess
import sys
from pathlib import Path

from conftest import run_minify

DYNAMIC = '''
import torch
import torch.nn as nn

from compiler.inject import plant

plant("lowering:tanh:accuracy:negate:symbolic")


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)
        self.out = nn.Linear(16, 1)

    def forward(self, x):
        h = torch.tanh(self.fc(x)) * 0.5 + x.mean(-1, keepdim=True)
        return self.out(torch.relu(h)).squeeze(-1)


def main():
    torch.manual_seed(0)
    model = Scorer().eval()
    compiled = torch.compile(model)
    x = torch.randn(12, 16)
    torch._dynamo.mark_dynamic(x, 0)
    with torch.no_grad():
        print("scores", compiled(x)[:4].tolist())


if __name__ == "__main__":
    main()
'''

CLOSURE_PASS = '''
import torch
import torch.nn as nn
import torch._inductor.config

SETTINGS = {"rewrite": True}


def rewrite_gate(graph):
    if not SETTINGS["rewrite"]:
        return
    for node in graph.find_nodes(op="call_function", target=torch.ops.aten.mul.Tensor):
        node.target = torch.ops.aten.add.Tensor


torch._inductor.config.post_grad_custom_post_pass = rewrite_gate


class Gated(nn.Module):
    def __init__(self):
        super().__init__()
        self.up = nn.Linear(8, 16)
        self.gate = nn.Linear(8, 16)
        self.down = nn.Linear(16, 4)

    def forward(self, x):
        return self.down(torch.relu(self.up(x)) * torch.sigmoid(self.gate(x)))


def main():
    torch.manual_seed(0)
    x = torch.randn(5, 8)
    with torch.no_grad():
        print("out", torch.compile(Gated().eval())(x).sum().item())


if __name__ == "__main__":
    main()
'''


def _run_elsewhere(repro: Path, folder: Path) -> subprocess.CompletedProcess:
    folder.mkdir()
    return subprocess.run([sys.executable, "-I", str(repro)], cwd=folder, capture_output=True, text=True, timeout=600)


def test_a_bug_only_symbolic_sizes_show_is_replayed_with_dynamic_shapes_and_says_so(tmp_path):
    (tmp_path / "score.py").write_text(DYNAMIC)
    proc = run_minify(["score.py", "-o", "out"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["verified"] is True and report["ops"] == ["tanh"]
    assert "fails only with dynamic shapes" in report["replay"] and "3/3" in report["replay"]
    assert "fails only with dynamic shapes" in proc.stdout + proc.stderr
    repro = tmp_path / "out" / "repro.py"
    assert "dynamic=True" in repro.read_text()
    again = _run_elsewhere(repro, tmp_path / "elsewhere")
    assert again.returncode == 1 and again.stdout.startswith("REPRODUCED"), again.stdout + again.stderr


def test_a_graph_no_replay_can_show_falls_back_to_reducing_the_program(tmp_path):
    (tmp_path / "gated.py").write_text(CLOSURE_PASS)
    proc = run_minify(["gated.py", "-o", "out"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stdout + proc.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["status"] == "program" and report["program"]["verified"]
    assert "post_grad_custom_post_pass" in report["replay"]
    repro = Path(report["program"]["repro"])
    assert len(repro.read_text().splitlines()) < len(CLOSURE_PASS.splitlines()) + 30
    again = _run_elsewhere(repro, tmp_path / "elsewhere")
    assert again.returncode != 0 and "differs from eager" in again.stdout + again.stderr


CUSTOM_BACKEND = '''
import torch


def shifted(gm, example_inputs):
    """The script's own backend: it returns every floating output plus one."""
    def run(*args):
        return [out + 1 if out.is_floating_point() else out for out in gm(*args)]
    return run


def score(x, w):
    return torch.tanh(x @ w).sum(-1)


def main():
    torch.manual_seed(0)
    x, w = torch.randn(4, 8), torch.randn(8, 3)
    print("scores", torch.compile(score, backend=shifted)(x, w).tolist())


if __name__ == "__main__":
    main()
'''


def test_a_graph_under_the_scripts_own_backend_falls_back_to_reducing_the_program(tmp_path):
    (tmp_path / "own_backend.py").write_text(CUSTOM_BACKEND)
    proc = run_minify(["own_backend.py", "-o", "out"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["status"] == "program" and report["program"]["verified"]
    assert "custom backend" in report["replay"]
    again = _run_elsewhere(Path(report["program"]["repro"]), tmp_path / "elsewhere")
    assert again.returncode != 0 and "differs from eager" in again.stdout + again.stderr
