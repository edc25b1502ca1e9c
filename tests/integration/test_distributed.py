"""`minify torchrun ...`: a distributed job under the capture, every rank recorded, the failing rank's
graph reduced to a one-process repro (issue 47). The end-to-end runs use real torchrun, gloo on CPU."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.rank_capture import rank_injections
from conftest import CORPUS, ROOT, run_minify
from minifier.cli import parser
from minifier.distributed.command import strip_rank, torchrun_form
from minifier.distributed.ranks import RankOutcome, choose_rank, mark_lost_peers
from minifier.distributed.torchrun_args import TorchrunError, parse
from minifier.capture.process import Capture, GraphRecord

DISTRIBUTED = CORPUS / "distributed"


def cases() -> list[dict]:
    return json.loads((DISTRIBUTED / "manifest.json").read_text())


def test_torchrun_options_pass_through_on_a_rendezvous_of_the_runs_own():
    cmd = parse(["--nproc_per_node=2", "--master-port", "29500", "--rdzv-endpoint=localhost:1", "-t", "3",
                 "train.py", "--steps", "2", "--master-port", "7"])
    assert (cmd.nproc, cmd.target, cmd.args) == (2, "train.py", ["--steps", "2", "--master-port", "7"])
    assert cmd.launcher_options() == ["--nproc-per-node", "2", "-t", "3", "--standalone", "--max-restarts", "0"]
    assert parse(["--nproc-per-node", "2", "-m", "pkg.train"]).module
    for bad in (["--nnodes", "2", "t.py"], ["--nproc-per-node", "gpu", "t.py"], ["--no-python", "t"], []):
        with pytest.raises(TorchrunError):
            parse(bad)


def test_the_torchrun_form_is_told_from_a_script_and_its_arguments():
    p = parser()
    argv, cmd = torchrun_form(["-o", "out", "--inject", "neg:accuracy", "python", "-m", "torch.distributed.run",
                               "--nproc-per-node", "2", "t.py", "-o", "x"], p)
    assert argv == ["-o", "out", "--inject", "neg:accuracy", "t.py", "--", "-o", "x"] and cmd.nproc == 2
    assert torchrun_form(["train.py", "torchrun"], p) == (["train.py", "torchrun"], None)  # the script's argument
    assert torchrun_form(["train.py", "--steps", "2"], p)[1] is None
    assert "--nnodes 2" in torchrun_form(["torchrun", "--nnodes", "2", "t.py"], p)[1]  # one line: why not


def test_a_planted_bug_limited_to_one_rank():
    command = ["python", "--inject", "rank=1:neg:accuracy", "--inject", "exp:accuracy", "x.py", "--", "--inject",
               "rank=1:y"]
    assert rank_injections(command, "1") == ["python", "--inject", "neg:accuracy", "--inject", "exp:accuracy",
                                             "x.py", "--", "--inject", "rank=1:y"]
    assert rank_injections(command, "0")[:3] == ["python", "--inject", "exp:accuracy"]
    assert strip_rank("rank=1:neg:accuracy") == "neg:accuracy" and strip_rank("neg") == "neg"
    argv, cmd = torchrun_form(["--inject", "rank=1:neg:accuracy", "torchrun", "t.py"], parser())
    assert argv[:2] == ["--inject", "neg:accuracy"] and cmd.rank_specs == {"neg:accuracy": "rank=1:neg:accuracy"}


def _capture(status: str, failing: bool) -> Capture:
    graphs = [GraphRecord(0, Path("."), 3, {}, {"kind": "accuracy"} if failing else None)]
    return Capture(graphs, {"status": status}, 1.0)


def test_the_failing_rank_is_chosen_and_its_peers_wait_on_it():
    crashed = RankOutcome(1, -6, None, 2.0, 2)
    waiting = RankOutcome(0, None, "SIGTERM", 2.0, 2)
    captures = {0: _capture("waiting", False), 1: _capture("crash", False)}
    assert choose_rank([waiting, crashed], captures) == 1
    assert waiting.to_dict(captures[0], 1)["message"].startswith("waiting on rank 1: ended by the job (SIGTERM)")
    # rank 0 raised only because rank 1 left the all-reduce: rank 1's own error is the job's
    ranks = [RankOutcome(0, 0, None, 1.0), RankOutcome(1, 0, None, 1.0)]
    captures = {0: Capture([], {"status": "error", "type": "DistBackendError", "message": "[../pair.cc:553] Connection "
                                "closed by peer [127.0.0.1]:1"}, 1.0), 1: Capture([], {"status": "error"}, 1.0)}
    mark_lost_peers(ranks, captures)
    # nothing failed; rank 0 hung at its end and was ended: rank 1's clean ending is the job's
    assert choose_rank([waiting, RankOutcome(1, 0, None, 1.0)], {0: _capture("waiting", False),
                                                                  1: _capture("ok", False)}) == 1
    assert choose_rank(ranks, captures) == 1 and ranks[0].to_dict(captures[0], 1)["status"] == "waiting"
    captures = {0: _capture("ok", False), 1: _capture("ok", True)}  # only rank 1's graph differs
    assert choose_rank([RankOutcome(0, 0, None, 1.0), RankOutcome(1, 0, None, 1.0)], captures) == 1


def _left_running(folder: Path) -> list[str]:
    """Processes whose command names the run's folder (nothing may outlive the run)."""
    left = []
    for proc in Path("/proc").iterdir():
        try:
            cmdline = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if proc.name.isdigit() and int(proc.name) != os.getpid() and str(folder) in cmdline:
            left.append(cmdline.replace("\0", " ")[:200])
    return left


def _check_case(case: dict, tmp_path: Path, folder: Path = DISTRIBUTED) -> None:
    out = tmp_path / "out"
    args = ["-o", str(out), *[a for spec in case["inject"] for a in ("--inject", spec)],
            "torchrun", "--nproc-per-node", str(case["nproc"]), str(folder / case["script"])]
    r = run_minify(args, tmp_path)
    assert r.returncode == case["exit"], r.stdout[-3000:] + r.stderr[-3000:]
    assert not _left_running(out)
    if case["exit"] == 2:  # bad input: one line (after the progress lines), no traceback
        lines = r.stderr.strip().splitlines()
        assert lines[-1].startswith("minify: ") and sum(line.startswith("minify: ") for line in lines) == 1, r.stderr
        assert "Traceback" not in r.stderr, r.stderr
        return
    if case.get("status") == "program":  # the whole program reduced, run alone as a world of one rank
        report = json.loads((out / "report.json").read_text())
        assert report["status"] == "program" and report["program"]["verified"] is True, report["program"]
        run = subprocess.run([sys.executable, str(out / "repro.py")], cwd=tmp_path, capture_output=True, text=True,
                             timeout=300, env={**os.environ, "PYTHONPATH": ""})
        assert run.returncode == 1 and case["error"] in run.stderr, run.stderr[-3000:]
        return
    report = json.loads((out / "report.json").read_text())
    assert report["rank"] == case["rank"] and report["failure"]["kind"] == case["kind"]
    assert [row["rank"] for row in report["ranks"] if row["failing_graphs"]] == case["failing_ranks"]
    if "rank_statuses" in case:  # the program ran through on every rank under the capture
        assert [row["status"] for row in report["ranks"]] == case["rank_statuses"], report["ranks"]
    repro = out / "repro.py"
    head = " ".join(line.lstrip("# ") for line in repro.read_text().splitlines()[:2])  # the header's first sentence
    assert f"rank {case['rank']} of {case['nproc']}, graph {report['failing_graph']}" in head, head
    assert any(op in head for op in case["culprit_ops"]), head
    assert report["ops_after"] <= case["max_ops"] and report["verified"] is True, report.get("verify_line")
    # the repro runs alone from another folder: on one process with no process group, or (the
    # collective itself the bug) on the ranks it starts itself
    run = subprocess.run([sys.executable, str(repro)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={**os.environ, "PYTHONPATH": ""})
    assert run.returncode == 1, run.stdout + run.stderr
    assert ("process_group" in repro.read_text()) == (case.get("repro_ranks", 1) == 2)
    assert all(text in repro.read_text() for text in case.get("repro_contains", [])), "a planted pass not carried"
    assert report.get("repro_ranks", 1) == case.get("repro_ranks", 1)


@pytest.mark.e2e
def test_a_two_rank_ddp_job_ends_in_a_one_process_repro(tmp_path):
    """The relu knob inside a DDPOptimizer-split graph, both ranks wrong: rank 0's graph reduced
    to relu alone, its repro verified on one process, nothing left running."""
    _check_case(next(c for c in cases() if c["name"] == "ddp_relu_knob"), tmp_path)


@pytest.mark.e2e
def test_a_bug_of_the_collective_itself_ends_in_a_two_rank_repro(tmp_path):
    """A wrong lowering of a functional all_reduce's wait, on both ranks: without its collective the
    graph passes on one process, so the repro is the all_reduce and its wait on 2 ranks, verified."""
    _check_case(next(c for c in cases() if c["name"] == "funcol_wait_lowering"), tmp_path)


NCCL = DISTRIBUTED / "gpu"


@pytest.mark.e2e
@pytest.mark.cuda
@pytest.mark.parametrize("case", json.loads((NCCL / "manifest.json").read_text()), ids=lambda c: c["name"])
def test_an_nccl_job_on_two_gpus(case, tmp_path):
    """The same on 2 GPUs over NCCL: a bug on one rank ends in a one-process repro on one GPU; a
    bug of the collective itself in a repro that spawns its 2 ranks over NCCL."""
    import torch

    if torch.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    _check_case(case, tmp_path, NCCL)


DEFAULT_CASES = ("ddp_relu_knob", "funcol_wait_lowering")


@pytest.mark.e2e
@pytest.mark.corpus
@pytest.mark.parametrize("case", [c for c in cases() if c["name"] not in DEFAULT_CASES], ids=lambda c: c["name"])
def test_distributed_corpus_case(case, tmp_path):
    _check_case(case, tmp_path)
