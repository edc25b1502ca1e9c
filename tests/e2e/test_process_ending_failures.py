"""Failures that end the process they happen in: a crash here, a device-side assert on the GPU.

Every try of such a failure needs a process of its own, so the confirmation asks all of its tries
at once. A CUDA build's zygote only imports (on the H100 a CPU compile started CUDA, and a process
that started CUDA cannot fork): the workers launch starts beside the capture stay fresh
interpreters, and those that replace a worker a failure ended are forked from it, paying no
`import torch`. MINIFY_ZYGOTE=cold takes that path on this CPU build. Once the reduction keeps one
op, the questions after it (the graph with that op masked, the whole graph's kernels) are asked
beside the rest of the reduction."""
import json
import os

import pytest

from conftest import CORPUS, run_minify


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    """One run of a case whose kernel aborts the process (SIGABRT), with a cold zygote."""
    tmp = tmp_path_factory.mktemp("crash")
    out = tmp / "out"
    os.environ["MINIFY_ZYGOTE"] = "cold"
    try:
        # Early checks off: the confirmation asks every try (with them, the first is asked while the script runs)
        done = run_minify([str(CORPUS / "log1p_crash_strided_scalar.py"), "-o", str(out), "-q", "-j", "2",
                           "--no-blame", "--early-checks", "off"], cwd=tmp)
    finally:
        del os.environ["MINIFY_ZYGOTE"]
    return done, out


def _report(crashed) -> dict:
    done, out = crashed
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads((out / "report.json").read_text())


@pytest.mark.slow
def test_workers_a_crash_ends_are_replaced_from_the_cold_zygote(crashed):
    report, logs = _report(crashed), crashed[1] / "work" / "logs"
    assert report["ops"] == ["log1p"] and report["verified"] is True and report["worker_restarts"] > 0, report
    assert "warmed up (['cold'])" in (logs / "zygote.log").read_text()
    first = [logs / "worker-0.log", logs / "worker-1.log"]  # started by launch, beside the capture
    assert not any(log.read_text().startswith("forked") for log in first)
    later = [log for log in logs.glob("worker-*.log") if log not in first]
    assert later and all(log.read_text().startswith("forked from the cold zygote") for log in later), later
    assert (logs / "worker-early-spare0.log").exists()  # started when the capture saw the crash


@pytest.mark.slow
def test_the_tries_of_a_crash_are_asked_at_once_and_its_next_questions_beside_its_reduction(crashed):
    _report(crashed)
    timeline = json.loads((crashed[1] / "work" / "timeline.json").read_text())
    checks = sorted((row for row in timeline if row["op"] == "check"), key=lambda row: row["queued"])
    tries = [row for row in checks if row["stage"] == "inductor"][:3]  # rows come in the order answered
    assert sorted(row["runs"] for row in tries) == [1, 1, 3], tries  # one job, then a fresh worker per try
    assert max(row["queued"] for row in tries) - tries[0]["queued"] < 0.1, tries
    # The crash names its kernel (the dead worker's marks file), so the whole graph's kernels (code
    # generated, nothing run) are asked once, with the tries (not after them), for the nodes the
    # reduction cuts after first; localization takes the same answer later.
    kernels = sorted((row for row in timeline if row["op"] == "kernels"), key=lambda row: row["source_lines"])
    small, whole = kernels[0]["source_lines"], kernels[-1]  # the reduced graph's size; the whole graph's job
    assert sum(1 for row in kernels if row["source_lines"] == whole["source_lines"]) == 1, kernels
    assert whole["queued"] - tries[0]["queued"] < 0.1, (whole, tries)
    assert whole["queued"] < min(c["queued"] for c in checks if c["source_lines"] == small), timeline
    assert "log1p" in " ".join(_report(crashed)["failure"]["kernel_nodes"]), _report(crashed)["failure"]
    # Once the reduction keeps one op, the masked graph's check is asked beside the rest of it.
    one_op = min(c["queued"] for c in checks if c["source_lines"] == small)
    assert any(c["queued"] >= one_op and c["source_lines"] not in (small, whole["source_lines"]) for c in checks), \
        timeline


HANGS = '''
import torch
import torch.nn as nn

from compiler.inject import inject_bug

inject_bug("relu", "runtime_error", form="hang", paths=("cpp", "cppvec"))  # a C++ relu that never returns

model = nn.Sequential(nn.Linear(16, 32), nn.LayerNorm(32), nn.ReLU(), nn.Linear(32, 4), nn.Tanh())
print(torch.compile(model)(torch.randn(8, 16)).sum())
'''


@pytest.mark.slow
def test_a_kernel_that_never_returns_ends_in_a_verified_one_op_hang_repro(tmp_path):
    """A hang end to end: the capture ends the script once the relu kernel has run past
    --hang-timeout (not at --timeout's 1800 s), each try of a hang is killed at that limit and
    names the kernel it was stuck in, and repro.py gives its child that limit and a fresh start."""
    script = tmp_path / "spins.py"
    script.write_text(HANGS)
    out = tmp_path / "out"
    done = run_minify([str(script), "-o", str(out), "-q", "--hang-timeout", "5"], cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["failure"]["kind"] == "hang" and report["ops"] == ["relu"] and report["verified"] is True, report
    assert "relu" in " ".join(report["failure"].get("kernel_nodes", [])), report["failure"]
    assert report["phases"]["capture"] < 120, report["phases"]  # the stuck kernel ended it
    repro = (out / "repro.py").read_text()
    assert "timeout=65)" in repro and "did not finish within 65 s" in repro
