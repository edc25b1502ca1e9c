"""repro.py stands alone: one file, from another directory, in a fresh and isolated Python, short.

The seeds' neg example (a planted C++ codegen bug that prints neg(x) as 2*x) must fit in 40
lines with the planted bug inline and reproduce; a crashing bug must still give a one-line
verdict; `minify replay` reruns a folder and prints the oracle's metrics.
"""
import subprocess
import sys

import pytest
import torch
import torch.fx as fx

from compiler.inject import Injection
from compiler.stages import CompileSetup, CompileSpec
from conftest import run_minify
from repro.writer import ReproInfo, write_repro

NEG_BUG = Injection("neg", template="decltype({x})(2 * {x})", paths=("cpp", "cppvec"))  # as corpus/neg_uint8_model.py


class Neg(torch.nn.Module):
    def forward(self, level):
        return (torch.neg(level),)


class Relu(torch.nn.Module):
    def forward(self, x):
        return (torch.relu(x) * 2,)


def traced(module: torch.nn.Module) -> fx.GraphModule:
    gm = fx.symbolic_trace(module)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm


def run(repro, cwd, *args):
    return subprocess.run([sys.executable, "-I", str(repro), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600)


@pytest.mark.e2e
def test_neg_repro_is_one_short_file_and_reproduces_from_elsewhere(tmp_path):
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor",
                     message="out[0] (uint8): 1 of 1 elements differ from eager",
                     setup=CompileSetup(CompileSpec(grad_enabled=False), [NEG_BUG.to_dict()]),
                     source="neg_uint8_model.py, graph 0 of 1", script="neg_uint8_model.py", graph=0)
    repro = write_repro(tmp_path / "out", traced(Neg()), [torch.tensor([186], dtype=torch.uint8)], info)
    source = repro.read_text()
    assert len(source.splitlines()) < 42, source  # with the line that keeps kernels in-process
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["repro.json", "repro.py"]  # no sidecar
    assert "torch.tensor([186], dtype=torch.uint8" in source and "torch.neg(level)  # uint8[1]" in source
    assert "patch_op(torch._inductor.codegen.cpp.CppOverrides, 'neg'" in source  # the planted bug, inline
    assert "torch.equal(a, e)" in source
    assert "minifier" not in source and "compiler" not in source and "import repro" not in source
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    proc = run(repro, elsewhere)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout == "REPRODUCED: out[0] (torch.uint8): differs from eager: compiled [116], eager [70]\n"
    replay = run_minify(["replay", str(tmp_path / "out")], cwd=elsewhere)
    assert replay.returncode == 1, replay.stdout + replay.stderr[-3000:]
    lines = replay.stdout.strip().splitlines()
    assert lines[-1].startswith("REPRODUCED") and any("out[0] uint8[1]" in line and "ok=False" in line
                                                      for line in lines)


@pytest.mark.slow
def test_crashing_bug_gives_a_one_line_verdict(tmp_path):
    info = ReproInfo(signature="crash@inductor|SIGABRT", kind="crash", stage="inductor",
                     message="process died: SIGABRT",
                     setup=CompileSetup(CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "runtime_error"}), []),
                     source="relu_runtime_error.py, graph 0 of 1")
    # Large enough for an OpenMP-parallel kernel: the planted throw then aborts the process.
    repro = write_repro(tmp_path / "out", traced(Relu()), [torch.randn(256, 1024)], info)
    source = repro.read_text()
    assert "torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = 'runtime_error'" in source
    assert "subprocess.run([sys.executable, __file__, '--compiled-run']" in source  # the crash hits a child
    assert (tmp_path / "out" / "inputs.pt").is_file() and "weights_only=True" in source
    proc = run(repro, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.strip() == "REPRODUCED: crash: the compiled run died of SIGABRT"


@pytest.mark.slow
def test_compile_error_repro_checks_that_compiling_raises(tmp_path):
    info = ReproInfo(signature="compile_error@inductor|CppCompileError|x", kind="compile_error", stage="inductor",
                     message="CppCompileError: C++ compile error",
                     setup=CompileSetup(CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"}), []),
                     source="relu_compile_error.py, graph 0 of 1")
    repro = write_repro(tmp_path / "out", traced(Relu()), [torch.randn(4)], info)
    proc = run(repro, tmp_path)
    assert proc.returncode == 1 and proc.stdout.startswith("REPRODUCED: CppCompileError"), proc.stdout + proc.stderr
    fixed = repro.read_text().replace("'compile_error'", "None")
    repro.write_text(fixed)
    proc = run(repro, tmp_path)
    assert proc.returncode == 0 and proc.stdout.strip() == "NOT REPRODUCED: compiling and running raise nothing"


class AsStridedOverARepeat(torch.nn.Module):  # issue 197431: compiled, a view past the end of its buffer
    def forward(self, x):
        return (torch.as_strided(x.repeat((3, 2))[:, ::2], (3, 2), (2, 1)),)


@pytest.mark.slow
def test_a_view_past_the_end_of_its_storage_is_checked_by_its_bounds_not_its_values(tmp_path):
    info = ReproInfo(signature="accuracy@inductor|meta", kind="accuracy", stage="inductor",
                     message="out[0] (float32): a view that reaches 12 bytes past the end of its storage",
                     setup=CompileSetup(CompileSpec(grad_enabled=False), []),
                     source="issue_197431, graph 0 of 1")
    repro = write_repro(tmp_path / "out", traced(AsStridedOverARepeat()), [torch.randn(1, 1)], info)
    proc = run(repro, tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr[-3000:]
    assert proc.stdout.strip() == ("REPRODUCED: out[0] (torch.float32): a view of 24 bytes over a storage of 12: "
                                   "it reads memory it does not own")


@pytest.mark.e2e
def test_replay_rejects_a_folder_without_a_repro(tmp_path):
    proc = run_minify(["replay", str(tmp_path)], cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stdout + proc.stderr
    assert proc.stderr.strip().startswith("minify: ") and len(proc.stderr.strip().splitlines()) == 1 and not proc.stdout


class MatMul(torch.nn.Module):
    def forward(self, a, b):
        return (torch.mm(a, b),)


def test_run_context_is_recorded_and_replayed(tmp_path):
    from compiler.context import current_context
    from repro import runner

    with torch.autocast("cpu", dtype=torch.bfloat16), torch.inference_mode():
        context = current_context()
    assert context == {"inference_mode": True, "autocast": {"dtype": "bfloat16"}} and current_context() == {}
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor", message="",
                     setup=CompileSetup(CompileSpec(grad_enabled=False), [], {**context, "deterministic": True}),
                     source="t.py, graph 0 of 1")
    repro = write_repro(tmp_path / "out", traced(MatMul()), [torch.randn(4, 4), torch.randn(4, 4)], info)
    source = repro.read_text()
    assert "with torch.no_grad(), torch.inference_mode(), torch.autocast('cpu', dtype=torch.bfloat16):" in source
    assert "torch.use_deterministic_algorithms(True)" in source
    r = runner.load(tmp_path / "out")
    assert r.CONTEXT == {"device": "cpu", "grad_enabled": False, "inference_mode": True,
                         "autocast": {"dtype": "bfloat16"}, "deterministic": True}
    outcome = runner.run_check(r.Repro, r.make_inputs, r.COMPILE, r.CONTEXT, r.CHECK)
    assert outcome.status == "pass" and [m["dtype"] for m in outcome.metrics] == ["bfloat16"]  # ran under autocast
    assert current_context() == {} and torch.is_grad_enabled()  # and every mode was restored


class NegMax(torch.nn.Module):
    def forward(self, x):
        return (torch.max(torch.neg(x), dim=0),)  # a multi-output op's tuple, returned whole


@pytest.mark.slow
def test_a_graph_returning_a_multi_output_ops_tuple_is_checked_element_by_element(tmp_path):
    """A reduction can cut a graph right after `min(dim)`/`max(dim)`, whose output is a tuple;
    repro.py compared only tensors, so it checked nothing and said NOT REPRODUCED."""
    from compiler.inject import parse_spec

    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor",
                     message="out[0] (float32): differs",
                     setup=CompileSetup(CompileSpec(grad_enabled=False), [parse_spec("lowering:neg:accuracy:add_one").to_dict()]),
                     source="t.py, graph 0 of 1", script="t.py", graph=0)
    repro = write_repro(tmp_path / "out", traced(NegMax()), [torch.tensor([[1.5, -2.0], [3.0, 0.5]])], info)
    assert "getitem" in repro.read_text()
    proc = run(repro, tmp_path)
    assert proc.returncode == 1 and proc.stdout.startswith("REPRODUCED"), proc.stdout + proc.stderr[-2000:]
