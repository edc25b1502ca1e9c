"""Issue 43, items 5 and 6: one bug is one report, and a one-op bug ends in a one-op repro, on a
residual CNN written as torchvision writes ResNet (`out += identity`, `nn.ReLU(inplace=True)`);
a finding that does not reproduce is listed as such and does not turn a verified run into exit 4."""
import json
import textwrap

import pytest
import torch
from rich.console import Console

from conftest import run_minify
from minifier.graph.nodes import exposed_nodes, overwritten_in_place
from minifier.report.console import print_summary
from minifier.report.rows import finding_counts, mark_unverified, run_status

RESNET = """\
    import torch
    import torch.nn as nn


    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x):
            identity = x if self.downsample is None else self.downsample(x)
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += identity
            return self.relu(out)


    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.stem = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
                                      nn.MaxPool2d(3, 2, 1))
            self.blocks = nn.Sequential(BasicBlock(8, 8, 1), BasicBlock(8, 16, 2), BasicBlock(16, 16, 1))
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            x = self.blocks(self.stem(x))
            return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


    if __name__ == "__main__":
        torch.manual_seed(0)
        with torch.no_grad():
            print(torch.compile(ResNet().eval())(torch.randn(2, 3, 16, 16))[0, :3])
    """


def _dynamo_graph(fn, *args):
    graphs = []
    torch._dynamo.reset()
    torch.compile(fn, backend=lambda gm, inputs: graphs.append(gm) or gm)(*args)
    return graphs[0]


def test_a_value_a_later_op_writes_in_place_is_not_observed():
    """Observed, the batch_norm a residual `+=` and an in-place relu overwrite is the relu's
    value: a relu bug was named for the batch_norm (and for the add of the next block)."""
    def block(x, w, mean, var):
        out = torch.nn.functional.batch_norm(torch.conv2d(x, w, padding=1), mean, var)
        out += x
        return torch.nn.functional.relu(out, inplace=True).sum(dim=1).mul_(2)

    gm = _dynamo_graph(block, torch.randn(1, 4, 5, 5), torch.randn(4, 4, 3, 3), torch.zeros(4), torch.ones(4))
    values = {n.name: torch.zeros(1) for n in gm.graph.nodes}
    ops = {n.name: str(getattr(n.target, "__name__", n.target)) for n in gm.graph.nodes if n.op != "placeholder"}
    later = overwritten_in_place(gm)
    assert {ops[n] for n in later} == {"batch_norm", "iadd", "sum"}, ops
    seen = {ops[n] for n in exposed_nodes(gm, values)}
    assert {"relu", "conv2d", "mul_"} <= seen and not seen & {"batch_norm", "iadd", "sum"}


def test_one_verified_finding_beside_one_not_reproduced_is_exit_0_and_says_so():
    """The run's status (its exit code: 0 for "reproduced") and the console's count, from the
    rows of one verified finding and one found with other ops masked whose repro did not verify."""
    rows = [{"failing_graph": 0, "repro": "OUT/repro.py", "verified": True},
            {"failing_graph": 0, "repro": "OUT/bug-2/repro.py", "verified": False,
             "verify_line": "NOT REPRODUCED: compiled matches eager"}]
    mark_unverified(rows, [None, "with 4 ops of other bugs masked (fed their eager values)"])
    assert run_status(rows) == "reproduced"
    assert "unverified" not in rows[0]
    assert "NOT REPRODUCED" in rows[1]["unverified"] and "artifact" in rows[1]["unverified"]
    assert finding_counts(rows) == {"findings": 2, "verified": 1, "not_reproduced": 1}
    assert run_status(rows[1:]) == "repro_failed"

    for row in rows:
        row.update(stage="inductor", reproduced="3/3", ops_before=7, ops_after=1, ops=["relu"], inputs=None,
                   also_in_graphs=[], failure={"kind": "accuracy", "message": "out[0] differs", "signature": "s"})
    report = {"status": run_status(rows), "findings": finding_counts(rows), "bugs": rows, "graphs": [],
              "graph_count": 1, "compiles": 9, "cache_hits": 0, "worker_restarts": 0, "wall_seconds": 1.0,
              "capture_seconds": 0.5}
    console = Console(record=True, width=200)
    print_summary(report, console)
    text = console.export_text()
    assert "2 findings: 1 verified, 1 not reproduced" in text
    assert "finding 2 of 2: not reproduced" in text


@pytest.mark.e2e
@pytest.mark.slow
def test_resnet_with_a_planted_relu_bug_is_one_bug_one_op_exit_0(tmp_path):
    script = tmp_path / "resnet.py"
    script.write_text(textwrap.dedent(RESNET))
    proc = run_minify([str(script), "-q", "--inject", "relu:accuracy:double"], cwd=tmp_path)
    report = json.loads((tmp_path / "minify-out" / "resnet" / "report.json").read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert report["status"] == "reproduced" and report["findings"]["not_reproduced"] == 0
    assert [b["ops"] for b in report["bugs"]][:1] == [["relu"]] and report["ops_after"] == 1
    assert all(b["verified"] is True for b in report["bugs"]), [b["ops"] for b in report["bugs"]]
    assert len(report["bugs"]) == 1, [b["ops"] for b in report["bugs"]]
