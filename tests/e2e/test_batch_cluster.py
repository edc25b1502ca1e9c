"""`minify batch --cluster`: a real local Dask cluster (a scheduler and two worker processes on
this machine) minifies two corpus scripts, one task each; one worker is killed while it runs its
script. The task runs again on the other worker, and the summary holds each script once, each
with a verified repro in its own folder: none lost, none doubled. Skipped without the cluster extra."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import CORPUS, ROOT
from test_fuzz_cluster import free_port, kill_a_busy_worker, start, stop

pytest.importorskip("dask.distributed")

SCRIPTS = ["neg_uint8_model", "decomp_layer_norm_mlp"]  # two of the quickest corpus cases (about 11 s each alone)


@pytest.mark.corpus
def test_a_worker_lost_mid_script_loses_and_doubles_nothing(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "COLUMNS": "200"}
    address = f"tcp://127.0.0.1:{free_port()}"
    log = open(tmp_path / "cluster.log", "w")
    procs = [start(["scheduler", "--port", address.rsplit(":", 1)[1], "--dashboard-address", ":0"], log, env)]
    time.sleep(3)
    procs += [start(["worker", address, "--nthreads", "1", "--no-nanny", "--name", f"w{i}"], log, env) for i in (1, 2)]
    try:
        batch = subprocess.Popen([sys.executable, "-m", "minifier", "batch", "--cluster", address, "-o",
                                  str(tmp_path / "out"), *(str(CORPUS / f"{s}.py") for s in SCRIPTS), "--", "-j", "1"],
                                 cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed = kill_a_busy_worker(address, time.monotonic() + 300)
        out, err = batch.communicate(timeout=900)
    finally:
        for proc in procs[1:] + procs[:1]:  # the workers, then the scheduler
            stop(proc)
        log.close()
    assert batch.returncode == 0, out + err
    result = json.loads((tmp_path / "out" / "batch.json").read_text())
    rows = result["scripts"]
    assert [r["name"] for r in rows] == SCRIPTS  # each once, in the order given
    assert all(r["exit"] == 0 and r["verified"] and r["bugs"] == 1 for r in rows), rows
    assert killed not in {r["worker"] for r in rows}  # the lost script ran again elsewhere
    attempts = sorted(len((tmp_path / "out" / "logs" / f"{s}.attempts").read_text().splitlines()) for s in SCRIPTS)
    assert attempts == [1, 2], attempts  # one script was started twice
    assert all((tmp_path / "out" / s / "repro.py").is_file() for s in SCRIPTS)
    assert "[2/2]" in err and all(s in out for s in SCRIPTS)  # progress as each ended; the table
