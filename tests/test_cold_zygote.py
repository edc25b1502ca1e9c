"""A CUDA build's zygote only imports (on the H100 a CPU compile started CUDA, and a process that
started CUDA cannot fork): the workers launch starts beside the capture stay fresh interpreters,
and those that replace a worker a crash ended are forked from it, paying no `import torch`.
MINIFY_ZYGOTE=cold takes that path on this CPU build."""
import json

import pytest

from conftest import CORPUS, run_minify


@pytest.mark.slow
def test_workers_a_crash_ends_are_replaced_from_the_cold_zygote(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIFY_ZYGOTE", "cold")
    out = tmp_path / "out"
    done = run_minify([str(CORPUS / "log1p_crash_strided_scalar.py"), "-o", str(out), "-q", "-j", "2", "--no-blame"],
                      cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["ops"] == ["log1p"] and report["verified"] is True and report["worker_restarts"] > 0, report
    logs = out / "work" / "logs"
    assert "warmed up (['cold'])" in (logs / "zygote.log").read_text()
    first = [logs / "worker-0.log", logs / "worker-1.log"]  # started by launch, beside the capture
    assert not any(log.read_text().startswith("forked") for log in first)
    later = [log for log in logs.glob("worker-*.log") if log not in first]
    assert later and all(log.read_text().startswith("forked from the cold zygote") for log in later), later
