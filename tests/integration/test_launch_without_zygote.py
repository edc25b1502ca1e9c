"""Where no zygote can fork them (a CUDA build of torch), the workers and the interpreter that
runs repro.py are started by minifier/start/launch.py beside the capture, warming up at once,
and the pool adopts them. MINIFY_NO_ZYGOTE takes that path on this CPU build."""
import json
import os

import pytest

from conftest import CORPUS, run_minify


@pytest.mark.e2e
@pytest.mark.slow
def test_workers_started_with_the_capture_are_adopted_by_the_pool(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIFY_NO_ZYGOTE", "1")
    out = tmp_path / "out"
    done = run_minify([str(CORPUS / "relu_accuracy.py"), "-o", str(out), "-q", "-j", "2", "--no-blame"], cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["ops"] == ["relu"] and report["verified"] is True
    logs = sorted(p.name for p in (out / "work" / "logs").iterdir())
    assert logs == ["worker-0.log", "worker-1.log"], logs  # the two that launch started; no replacement
    assert not (out / "work" / "logs" / "zygote.log").exists() and os.environ["MINIFY_NO_ZYGOTE"] == "1"


@pytest.mark.slow
def test_launch_starts_the_workers_and_the_verifier_when_no_zygote_can(tmp_path, monkeypatch):
    """What launch hands the pipeline: as many workers as jobs, each told to warm up already,
    and a pre-started interpreter for repro.py; stop() ends them all."""
    from minifier.start.launch import Options, launch

    monkeypatch.setenv("MINIFY_NO_ZYGOTE", "1")
    launched = launch(Options(script=CORPUS / "relu_accuracy.py", out=tmp_path / "out", jobs=2))
    try:
        assert launched.zygote is None and len(launched.workers) == 2
        assert all(worker.warming and worker.alive for worker in launched.workers)
        assert launched.interpreters.ready is not None  # the repro runner, warming beside the workers
        assert launched.interpreters.started == {"worker": 2, "repro": 1}
        answers = [worker.warmed(300.0) for worker in launched.workers]
        assert all(answer and answer["status"] == "ready" for answer in answers), answers
    finally:
        launched.stop()
    assert not any(worker.alive for worker in launched.workers)
