"""Blame's probe processes started ahead (minifier/blame/ready.py), as a GPU run starts them.

On a GPU machine they spare each blame probe its Python, torch and CUDA start-up; here the
same processes are warmed for the CPU and must give the search the answers its own fresh
processes give.
"""
import subprocess
import time

import pytest
import torch

from compiler.inject import parse_spec
from minifier.blame.ready import ReadyProbes
from minifier.blame.search import blame_report
from minifier.workers.zygote import Forked, Zygote
from test_blame import SigmoidMulTanh, repro_folder


@pytest.mark.slow
def test_blame_with_probes_taken_warm_finds_what_fresh_probes_find(tmp_path):
    """A lowering bug blamed with every probe process taken from ReadyProbes: the same findings
    as with fresh processes, and every process it did not take is gone after close."""
    folder = repro_folder(tmp_path / "ready", SigmoidMulTanh(), [torch.randn(32), torch.randn(32)],
                          [parse_spec("lowering:sigmoid:accuracy:negate")])
    fresh = blame_report(folder, say=lambda text: None)
    probes = ReadyProbes({"cpu": 2})
    taken = []
    take = probes.take
    probes.take = lambda device: taken.append(device) or take(device)
    try:
        warm = blame_report(folder, say=lambda text: None, probes=probes)
    finally:
        left = [child.proc for waiting in probes.ready.values() for child in waiting]
        probes.close()
    assert taken and set(taken) == {"cpu"}  # the baseline's worker and the scalar probe started ahead
    assert warm["blame"] == fresh["blame"] and warm["ruled_out"] == fresh["ruled_out"]
    assert [r["name"] for r in warm["runs"]] == [r["name"] for r in fresh["runs"]]
    assert left and all(_ends(proc) for proc in left)  # killed by close, reaped on a thread


@pytest.mark.slow
def test_probes_given_a_zygote_are_forked_from_it_once_it_is_ready(tmp_path):
    """On a CUDA build the run's first probes wait for the zygote (a cold one, as there) and are
    forked from it: no `import torch` of their own beside the capture's and the workers'."""
    zygote = Zygote(tmp_path / "zygote.log", cold=True)
    probes = ReadyProbes({"cpu": 1}, zygote)
    try:
        assert zygote.wait_ready()
        deadline = time.monotonic() + 60
        while not probes.ready["cpu"] and time.monotonic() < deadline:
            time.sleep(0.1)
        child = probes.take("cpu")
        assert child is not None and isinstance(child.proc, Forked)
        child.proc.kill()
    finally:
        probes.close()
        zygote.close()


def _ends(proc, within: float = 30.0) -> bool:
    try:
        proc.wait(timeout=within)
    except subprocess.TimeoutExpired:
        return False
    return True


@pytest.mark.slow
def test_the_cpu_probe_of_a_gpu_repro_compiles_scalar_cpp(tmp_path):
    """The "C++ backend instead of Triton" probe asks for no vector ISA (their checks cost 43-56 s
    in a fresh process on torch 2.11): a bug planted in vectorized C++ alone passes under it."""
    from minifier.blame.probe_worker import BlameWorker
    from minifier.blame.search import ON_CPU
    from compiler.subsystems import Experiment

    folder = repro_folder(tmp_path / "vec", SigmoidMulTanh(), [torch.randn(64), torch.randn(64)],
                          [parse_spec("sigmoid:accuracy:double@cppvec")])
    with BlameWorker(folder, "inductor", isolate=True) as worker:
        assert worker.run(Experiment("baseline"))["status"] == "fail"
        assert worker.run(ON_CPU)["status"] == "pass"
