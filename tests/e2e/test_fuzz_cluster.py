"""`minify fuzz --cluster`: a real local Dask cluster (a scheduler and two worker processes on
this machine) runs a two-shard campaign; one worker is killed while it runs a shard. The shard is
run again on the other worker and the merged findings are those of the same campaign run in one
process (`--shard 1/1`): none lost, none doubled. Skipped without the cluster extra."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from conftest import ROOT, run_minify
from minifier.fuzz.records import load

pytest.importorskip("dask.distributed")

CAMPAIGN = ["--ops", "abs,neg", "--dtypes", "float32", "--inject", "neg:accuracy:double", "--no-reduce", "--seed", "0",
            "--max-examples", "8", "--unit-examples", "4", "--backward", "0", "--mask", "accuracy@inductor|signed_zero"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args: list[str], log, env) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "dask", *args], stdout=log, stderr=subprocess.STDOUT, env=env,
                            start_new_session=True)


def kill_a_busy_worker(address: str, deadline: float) -> str:
    """Wait until a worker has run a shard for a few seconds, then SIGKILL its process."""
    from dask.distributed import Client

    with Client(address, timeout="30s") as client:
        busy_since: dict[str, float] = {}
        while time.monotonic() < deadline:
            for worker, keys in client.processing().items():
                if keys and worker not in busy_since:
                    busy_since[worker] = time.monotonic()
                if keys and time.monotonic() - busy_since[worker] > 8:  # mid-task: the shard has started
                    pid = client.run(os.getpid, workers=[worker])[worker]
                    os.kill(pid, signal.SIGKILL)
                    return worker
            time.sleep(0.5)
    raise AssertionError("no worker ever ran a shard")


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM, then SIGKILL: the process group of one cluster process this test started."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        if proc.poll() is None:
            os.killpg(proc.pid, sig)
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                continue


@contextlib.contextmanager
def local_cluster(log_path, env):
    """A real Dask cluster on this machine, a scheduler and two one-thread workers (w1, w2): its
    address; the workers, then the scheduler, are stopped on the way out."""
    address = f"tcp://127.0.0.1:{free_port()}"
    log = open(log_path, "w")
    procs = [start(["scheduler", "--port", address.rsplit(":", 1)[1], "--dashboard-address", ":0"], log, env)]
    time.sleep(3)
    procs += [start(["worker", address, "--nthreads", "1", "--no-nanny", "--name", f"w{i}"], log, env) for i in (1, 2)]
    try:
        yield address
    finally:
        for proc in procs[1:] + procs[:1]:
            stop(proc)
        log.close()


@pytest.mark.corpus
def test_a_worker_lost_mid_shard_loses_and_doubles_nothing(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}
    with local_cluster(tmp_path / "cluster.log", env) as address:
        campaign = subprocess.Popen([sys.executable, "-m", "minifier", "fuzz", *CAMPAIGN, "--cluster", address,
                                     "--shards", "2", "-o", str(tmp_path / "cl")], cwd=tmp_path, env=env,
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed = kill_a_busy_worker(address, time.monotonic() + 300)
        out, err = campaign.communicate(timeout=900)
    assert campaign.returncode == 1, out + err
    result = json.loads((tmp_path / "cl" / "fuzz.json").read_text())
    assert sorted(a["shard"] for a in result["answers"]) == ["1/2", "2/2"] and not result["failed_shards"], result
    assert killed not in {a["worker"] for a in result["answers"]}  # the lost shard ran again elsewhere
    attempts = sorted(len(list(p.iterdir())) for p in (tmp_path / "cl" / "shards").iterdir())
    assert attempts == [1, 2], attempts  # one shard was started twice
    assert result["examples"] == 8 and "done on" in err
    one = run_minify(["fuzz", *CAMPAIGN, "--shard", "1/1", "-q", "-o", str(tmp_path / "one")], cwd=tmp_path)
    assert one.returncode == 1, one.stderr
    merged, alone = load(tmp_path / "cl"), load(tmp_path / "one")
    assert sorted(merged) == sorted(alone) and len(merged) == len({r["key"] for r in merged.values()})
