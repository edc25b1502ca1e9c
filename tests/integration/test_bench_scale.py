"""`minify bench --scale` on its smallest model, end to end: the script, minify and the answer.

Also what the run asks its workers about the whole graph (work/timeline.json): the
confirmation's compile also returns the values Inductor stores anyway (judged on the graph's
own output), so the divergence job compiles no whole graph, and localization answers from
their results (issue 25: full-graph work only where it must happen)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from minifier.bench.memory import tree_memory_mib, tree_pss_mib

ROOT = Path(__file__).resolve().parents[2]


def test_memory_of_a_process_tree_counts_its_children(tmp_path):
    child = "import time; b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(30)"
    parent = subprocess.Popen([sys.executable, "-c",
                               f"import subprocess, sys; subprocess.run([sys.executable, '-c', {child!r}])"])
    try:
        deadline, mib = time.monotonic() + 20, 0.0
        while time.monotonic() < deadline and mib < 200:
            time.sleep(0.3)
            mib = tree_pss_mib(parent.pid)
        assert mib >= 200  # the grandchild's 200 MiB, seen from the parent
    finally:
        for p in [parent]:
            subprocess.run(["pkill", "-P", str(p.pid)])
            p.kill()


def test_held_memory_leaves_out_the_pages_of_a_mapped_file(tmp_path):
    """A memory-mapped file's pages (recorded values read back mapped) count in all a tree holds,
    not in what it holds that the kernel cannot drop; an anonymous buffer counts in both."""
    data = tmp_path / "data.bin"
    data.write_bytes(b"\1" * (300 * 2**20))
    child = ("import mmap, time; f = open({path!r}, 'rb'); m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ); "
             "s = sum(m[i] for i in range(0, len(m), 4096)); b = bytearray(100 * 2**20); "
             "b[::4096] = b'x' * len(b[::4096]); print('ready', flush=True); time.sleep(30)").format(path=str(data))
    proc = subprocess.Popen([sys.executable, "-c", child], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "ready"
        total, held = tree_memory_mib(proc.pid)
        assert total >= 390, total  # the file's 300 MiB and the buffer's 100
        assert 100 <= held < 250, held  # the buffer, the interpreter; not the file
    finally:
        proc.kill()


@pytest.mark.e2e
@pytest.mark.slow
def test_scale_bench_smallest_model_answers_relu_with_one_full_graph_compile_per_question(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"}
    proc = subprocess.run([sys.executable, "-m", "minifier", "bench", "--scale", "--sizes", "2", "-o", str(tmp_path),
                           "--json", str(tmp_path / "bench.json")], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    data = json.loads((tmp_path / "scale.json").read_text())
    row = data["sizes"][0]
    assert row["blocks"] == 2 and row["correct"] and row["ops"] == ["relu"]
    assert row["script_seconds"] > 0 and row["minify_seconds"] > row["script_seconds"] * 0.5
    assert set(row["phases"]) >= {"capture", "confirmation", "reduction", "verification"}
    assert row["minify_peak_mib"] and row["minify_peak_mib"] > row["script_peak_mib"]
    assert 0 < row["minify_held_mib"] <= row["minify_peak_mib"]
    assert "whole run / script alone" in proc.stdout
    timeline = json.loads((tmp_path / "scale" / "mlp2" / "minify-out" / "work" / "timeline.json").read_text())
    plain = next(job["source_lines"] for job in timeline if job["stage"] == "eager")  # the whole graph's size
    whole = [job for job in timeline if job["source_lines"] >= plain and job["stage"] == "inductor"]
    assert sorted((job["op"], job["runs"]) for job in whole) == [("check", 3), ("divergence", 1)], whole
    confirmation = next(job for job in whole if job["op"] == "check")
    assert confirmation["judged_outputs"] == 1  # its own output; the values Inductor stores ride along
    divergence = next(job for job in whole if job["op"] == "divergence")
    assert divergence["compiles"] == 1  # the addmm under relu alone: the stored values came with the confirmation
    # each worker job's own peak resident memory (a worker holds torch: hundreds of MiB); the
    # capture's row is the script's run, not a worker's job
    assert all(job["peak_mib"] > 100 for job in timeline if job["op"] != "capture"), timeline
