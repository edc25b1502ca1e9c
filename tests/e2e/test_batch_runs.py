"""`minify batch`: here, a script minified into a folder of its own, with a row in batch.json and
the table. `--cluster`: a real local Dask cluster (a scheduler and two worker processes on this
machine) minifies two corpus scripts, one task each; one worker is killed while it runs its
script. The task runs again on the other worker, and the summary holds each script once, each
with a verified repro in its own folder: none lost, none doubled (skipped without the cluster extra)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import CORPUS, ROOT, run_minify

SCRIPTS = ["neg_uint8_model", "decomp_layer_norm_mlp"]  # two of the quickest corpus cases (about 11 s each alone)


def test_a_local_batch_gives_each_script_a_folder_and_a_row(tmp_path):
    script = str(CORPUS / "neg_uint8_model.py")
    proc = run_minify(["batch", "-o", str(tmp_path / "out"), script, "--", "-j", "1", "--no-blame"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads((tmp_path / "out" / "batch.json").read_text())["scripts"]
    assert [(r["name"], r["exit"], r["bugs"], r["verified"], r["worker"]) for r in rows] == [
        ("neg_uint8_model", 0, 1, True, "local")]
    assert rows[0]["ops_after"] < rows[0]["ops_before"] and (tmp_path / "out" / "neg_uint8_model" / "repro.py").is_file()
    assert "[1/1] neg_uint8_model: exit 0" in proc.stderr and "1/1 verified repro(s)" in proc.stdout


@pytest.mark.corpus
def test_a_worker_lost_mid_script_loses_and_doubles_nothing(tmp_path):
    pytest.importorskip("dask.distributed")
    from test_fuzz_cluster import kill_a_busy_worker, local_cluster  # it skips itself without Dask
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "COLUMNS": "200"}
    with local_cluster(tmp_path / "cluster.log", env) as address:
        batch = subprocess.Popen([sys.executable, "-m", "minifier", "batch", "--cluster", address, "-o",
                                  str(tmp_path / "out"), *(str(CORPUS / f"{s}.py") for s in SCRIPTS), "--", "-j", "1"],
                                 cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        killed = kill_a_busy_worker(address, time.monotonic() + 300)
        out, err = batch.communicate(timeout=900)
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
