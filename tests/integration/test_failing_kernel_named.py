"""The kernel a failure that ends its process ran in, and its nodes (where the reduction cuts
first). On a GPU: a Triton kernel that device-asserts is named by its wait (compiler.device_asserts)
and the kernel map of the same compile gives its nodes; waiting changes no answer. On the CPU: a
crashed worker's marks file or fault-handler stacks name the kernel (compiler.crash_trace)."""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
import torch.fx as fx

from compiler.crash_trace import kernel_marks, marks_path
from compiler.graph_code import module_source
from compiler.stages import CompileSetup, CompileSpec
from minifier.run.pipeline import record_values
from minifier.search.kernel_nodes import failing_kernel_nodes
from minifier.workers.answer import Answer
from minifier.workers.evaluate import Evaluator
from minifier.workers.job import Job
from minifier.workers.pool import WorkerPool
from minifier.workers.protocol import CaseValues
from minifier.workers.worker import run_check


SCRIPT = textwrap.dedent("""
    import json, sys, torch
    from compiler import device_asserts, kernels, settings
    settings.apply()
    torch._inductor.config.triton.inject_relu_bug_TESTING_ONLY = "runtime_error"

    def f(x, y):
        a = torch.sin(x) * 2       # a kernel before the asserting one
        b = torch.relu(a @ y)      # mm, then relu (asserts)
        return torch.tanh(b) + 1

    x, y = torch.randn(64, 64, device="cuda"), torch.randn(64, 64, device="cuda")
    error = None
    with kernels.recorded_kernels() as kernel_map, device_asserts.kernel_waits() as named:
        try:
            torch.compile(f)(x, y)
            torch.cuda.synchronize()
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
    print(json.dumps({"named": named, "nodes": kernels.nodes_of(named, kernel_map), "error": error,
                      "kernels": [k.name for k in kernel_map]}))
""")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_the_asserting_kernel_is_named_and_its_nodes_hold_the_culprit(tmp_path):
    proc = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300,
                          cwd=str(Path(__file__).resolve().parents[2]))
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "device-side assert" in (found["error"] or ""), found
    assert len(found["named"]) == 1 and found["named"][0] in found["kernels"], found
    assert "relu" in found["named"][0] and found["nodes"], found  # Inductor names a kernel for its ops
    assert not {"sin", "a"} & set(found["nodes"]), found  # the kernel before it computes neither


def test_a_check_waiting_on_each_kernel_answers_as_one_that_does_not(tmp_path):
    """Runs on the CPU too: `kernel_waits` (set by the pool once the run has asserted) changes
    neither the verdict nor the question's key, and names nothing where no kernel asserts."""
    gm = fx.symbolic_trace(lambda x: torch.neg(torch.tanh(x)) * 2)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    torch.save({"x": torch.linspace(-2, 2, 8, device=device).reshape(2, 4)}, tmp_path / "values.pt")
    planted = ({"op": "neg", "kind": "accuracy", "form": None},)
    job = Job(source=module_source(gm), inputs=("x",), case_dir=str(tmp_path), spec=CompileSpec().to_dict(),
              injections=planted)
    waiting = Job.from_dict({**job.to_dict(), "kernel_waits": True})
    assert waiting.kernel_waits and waiting.key() == job.key()
    plain, waited = run_check(job, CaseValues()), run_check(waiting, CaseValues())
    assert plain["status"] == waited["status"] == "fail" and plain["signature"] == waited["signature"], waited
    assert "kernel_nodes" not in waited


@pytest.mark.slow
def test_a_crashed_worker_names_its_kernel_and_the_kernel_map_its_nodes(tmp_path):
    """On the CPU: a C++ kernel that aborts (Inductor's relu knob, thrown inside an OpenMP region)
    kills its worker; its marks file (or the fault handler's stacks in its log) names the kernel,
    and the graph's kernel map (code generated, nothing run) gives the nodes the reduction cuts after."""
    def f(x, y):
        a = torch.sin(x) * 2
        b = torch.relu(a @ y)
        return torch.tanh(b) + 1

    gm = fx.symbolic_trace(f)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    values = record_values(gm, [torch.randn(256, 256), torch.randn(256, 256)])
    torch.save(values, tmp_path / "values.pt")
    spec = CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "runtime_error"})
    pool = WorkerPool(1, tmp_path / "logs")
    try:
        ev = Evaluator(pool, tmp_path, CompileSetup(spec, []), signature="")
        answer = Answer.from_wire(ev.outcomes([gm])[0])
        assert answer.kind == "crash" and answer.died_in_kernel and "relu" in answer.died_in_kernel, answer
        nodes = failing_kernel_nodes([answer], ev.for_bug("inductor", answer.signature), gm)
    finally:
        pool.close()
    assert "relu" in nodes and not {"sin", "mul", "matmul"} & set(nodes), nodes


@pytest.mark.slow
def test_a_worker_killed_as_hung_names_the_kernel_it_was_stuck_in(tmp_path):
    """On the CPU: a C++ kernel that never returns (the relu hang plant) is killed at the check's
    limit; its worker's marks file, read before the kill, names the relu kernel, and the hang's
    answer carries it as a crash's does."""
    from compiler.inject import parse_spec

    gm = fx.symbolic_trace(lambda x: torch.tanh(torch.relu(torch.sin(x) @ x)) + 1)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    torch.save(record_values(gm, [torch.randn(64, 64)]), tmp_path / "values.pt")
    planted = (parse_spec("relu:runtime_error:hang").to_dict(),)
    pool = WorkerPool(1, tmp_path / "logs", timeout=40.0)  # its compile well within
    try:
        ev = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), planted), signature="")
        answer = Answer.from_wire(ev.outcomes([gm])[0])
        nodes = failing_kernel_nodes([answer], ev.for_bug("inductor", answer.signature), gm)
    finally:
        pool.close()
    assert answer.kind == "hang" and "relu" in (answer.died_in_kernel or ""), answer
    assert "relu" in nodes and not {"sin", "matmul"} & set(nodes), nodes


def test_a_compile_under_kernel_marks_runs_its_cpp_kernels_through_the_marks_file(tmp_path):
    """In this process, on the CPU: the wrapper Inductor compiles calls its C++ kernel marked (the
    file, zero bytes at first, was written, then blanked with spaces on return), computes what it
    did unmarked, and a compile after the marks end leaves the file alone."""
    from compiler import settings

    settings.apply()
    path = marks_path(tmp_path, os.getpid())
    x = torch.randn(64, 64)
    torch._dynamo.reset()
    with kernel_marks(path):
        marked = torch.compile(lambda t: torch.relu(t) * 2 + 1)(x)
    after = path.read_bytes()
    assert after.startswith(b" " * 10) and after.strip(b" \0") == b"", after  # a mark, blanked
    torch._dynamo.reset()
    plain = torch.compile(lambda t: torch.relu(t) * 2 + 1)(x)
    assert path.read_bytes() == after and torch.equal(marked, plain)
