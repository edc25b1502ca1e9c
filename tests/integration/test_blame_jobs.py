"""Blame's experiments as jobs of the workers that answer the evaluator (minifier/blame/jobs.py).

The run's own pool answers them beside its checks, so a worker must come out of a blame
experiment as it went in (the repro's config and planted bug undone), and the findings must be
those of a pool blame starts for itself (`minify bisect`).
"""
import pytest
import torch

from compiler.inject import parse_spec
from compiler.subsystems import Experiment
from minifier.blame.jobs import BlameJobs
from minifier.blame.search import ON_CPU, blame_report
from minifier.workers.pool import WorkerPool
from test_blame import SigmoidMulTanh, repro_folder


@pytest.mark.slow
def test_blame_on_a_shared_pool_finds_what_its_own_pool_finds_and_leaves_the_worker_clean(tmp_path):
    """A lowering bug blamed on a one-worker pool: the findings of blame's own pool, and the same
    worker then compiles the same graph without the bug (nothing planted outlived its jobs)."""
    inputs = [torch.randn(32), torch.randn(32)]
    folder = repro_folder(tmp_path / "bug", SigmoidMulTanh(), inputs, [parse_spec("lowering:sigmoid:accuracy:negate")],
                          config={"cpp.simdlen": 8})
    clean = repro_folder(tmp_path / "clean", SigmoidMulTanh(), inputs, [])
    own = blame_report(folder, say=lambda text: None)
    pool = WorkerPool(1, tmp_path / "logs", timeout=300.0)
    try:
        shared = blame_report(folder, say=lambda text: None, pool=pool)
        after = BlameJobs(pool, clean, "inductor").run(Experiment("baseline"))
        assert pool.restarts == 0 and pool.replaced == 0  # the same worker answered every job
        hello = BlameJobs(pool, clean, "inductor")
        script_defaults = hello.info(hello.start())["script_defaults"]
    finally:
        pool.close()
    assert shared["blame"] == own["blame"] and shared["ruled_out"] == own["ruled_out"]
    assert [r["name"] for r in shared["runs"]] == [r["name"] for r in own["runs"]]
    assert any(f["what"] == "lowering" for f in shared["blame"]), shared["blame"]
    assert after["status"] == "pass", after
    assert script_defaults == {}  # the clean folder sets no config; the bug's simdlen did not stay


@pytest.mark.slow
def test_the_cpu_probe_of_a_gpu_repro_compiles_scalar_cpp(tmp_path):
    """The "C++ backend instead of Triton" probe asks for no vector ISA (their checks cost 43-56 s
    in a fresh process on torch 2.11): a bug planted in vectorized C++ alone passes under it, even
    in a warm worker that has compiled vectorized C++ already (Inductor keeps the ISAs it listed);
    that worker then ends, so that no later job of the pool compiles without vector ISAs."""
    folder = repro_folder(tmp_path / "vec", SigmoidMulTanh(), [torch.randn(64), torch.randn(64)],
                          [parse_spec("sigmoid:accuracy:double@cppvec")])
    pool = WorkerPool(1, tmp_path / "logs", timeout=300.0)
    try:
        jobs = BlameJobs(pool, folder, "inductor")
        assert jobs.run(Experiment("baseline"))["status"] == "fail"
        assert jobs.run(ON_CPU)["status"] == "pass"
        assert pool.replaced == 1 and pool.restarts == 0 and jobs.restarts == 0
        assert jobs.run(Experiment("baseline again"))["status"] == "fail"  # its replacement vectorizes
    finally:
        pool.close()
