"""A question with calls before the judged one (CUDA graphs, compiler/cudagraphs.py) runs on any
device: each run compiles afresh, calls the graph that often on zeros, then judges; gradients
too. On the CPU no CUDA graph runs, so a correct graph passes every run and a planted bug fails
every run."""
import torch
import torch.fx as fx

from compiler.graph_code import module_source
from compiler.stages import CompileSpec
from minifier.workers.job import Job
from minifier.workers.protocol import CaseValues
from minifier.workers.worker import run_check


def tanh_neg(x):
    return torch.neg(torch.tanh(x)) * 2


def job(case_dir, injections=()) -> Job:
    gm = fx.symbolic_trace(tanh_neg)
    return Job(source=module_source(gm), inputs=("x",), case_dir=str(case_dir), spec=CompileSpec().to_dict(),
               runs=2, calls_before=2, backward=True, injections=tuple(injections))


def test_calls_before_with_gradients_pass_and_fail_as_the_graph_does(tmp_path):
    torch.save({"x": torch.linspace(-2, 2, 8).reshape(2, 4)}, tmp_path / "values.pt")
    clean = run_check(job(tmp_path), CaseValues())
    assert clean["status"] == "pass" and [r["status"] for r in clean["runs"]] == ["pass", "pass"], clean
    planted = run_check(job(tmp_path, [{"op": "neg", "kind": "accuracy", "form": None}]), CaseValues())
    assert [r["status"] for r in planted["runs"]] == ["fail", "fail"], planted
    assert job(tmp_path).key() != Job(**{**job(tmp_path).__dict__, "calls_before": 0}).key()
