"""GPU safety with plain processes (docs/gpu-safety.md): the gate, the cap, SIGTERM before
SIGKILL and the health check's plain answer. Runs without a GPU."""
import json
import subprocess
import sys
import time

import pytest

from compiler import gpu_gate
from compiler.gpu_slots import CudaSlots
from minifier.localize.early_checks import wanted
from minifier.workers.reap import end_now, kill_soon, wait_reaped

TAKE_SHARED = ("import sys, time; sys.path.insert(0, {root!r}); from compiler import gpu_gate; "
               "start = time.time(); ctx = gpu_gate.starting_cuda(); ctx.__enter__(); print(time.time() - start)")


@pytest.fixture
def gate(tmp_path, monkeypatch):
    monkeypatch.setenv(gpu_gate.GATE_ENV, str(tmp_path / "gate.lock"))
    monkeypatch.setattr(gpu_gate, "_asserting", type(gpu_gate._asserting)())
    return tmp_path / "gate.lock"


def _python(code: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, **kw)


def test_a_cuda_start_waits_while_the_gate_is_held_exclusively_and_not_beside_another_start(gate):
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[2])
    with gpu_gate.exclusive():
        waiting = _python(TAKE_SHARED.format(root=root))
        time.sleep(1.5)
        assert waiting.poll() is None  # still waiting for the assert's teardown to end
    assert float(waiting.communicate(timeout=60)[0]) >= 1.0
    with gpu_gate.starting_cuda():  # shared beside shared: no wait
        assert float(_python(TAKE_SHARED.format(root=root)).communicate(timeout=60)[0]) < 1.0


def test_the_capture_holds_the_gate_from_a_poisoning_failure_until_it_exits(gate):
    from pathlib import Path
    root = str(Path(__file__).resolve().parents[2])
    code = (f"import sys, time; sys.path.insert(0, {root!r}); from compiler import gpu_gate; "
            "print(gpu_gate.hold_if_poisoned('CUDA error: device-side assert triggered'), flush=True); time.sleep(2)")
    capture = _python(code)
    assert capture.stdout.readline().strip() == "True"
    start = time.monotonic()
    with gpu_gate.starting_cuda():
        waited = time.monotonic() - start
    assert waited > 0.5 and capture.wait(10) == 0
    assert gpu_gate.hold_if_poisoned("accuracy: max abs diff 3.0") is False


def test_without_a_gate_nothing_waits(monkeypatch):
    monkeypatch.delenv(gpu_gate.GATE_ENV, raising=False)
    with gpu_gate.exclusive(), gpu_gate.exclusive():  # two holders in one thread: no lock at all
        assert not gpu_gate.enabled() and not gpu_gate.asserting()


def test_a_process_is_sent_sigterm_and_killed_only_after_the_grace(tmp_path):
    mark = tmp_path / "term"
    stubborn = _python(f"import signal, time; signal.signal(signal.SIGTERM, lambda *a: open({str(mark)!r}, 'w').write('x'));"
                       " print('up', flush=True); time.sleep(60)")
    assert stubborn.stdout.readline().strip() == "up"
    start = time.monotonic()
    assert end_now(stubborn, grace=1.0) == -9
    assert mark.exists() and time.monotonic() - start >= 1.0
    polite = _python("import time; print('up', flush=True); time.sleep(60)")
    assert polite.stdout.readline().strip() == "up"
    kill_soon(polite)
    assert wait_reaped(10) and polite.returncode == -15  # SIGTERM ended it: no SIGKILL was needed


def test_the_cap_refuses_spares_and_gives_an_idle_spares_slot_to_a_needed_process():
    slots = CudaSlots(cap=2, wait=0.5)
    slots.enable()
    procs = [_python("import time; time.sleep(60)") for _ in range(2)]
    needed = slots.take()
    needed.bind(procs[0])
    spare = slots.take(optional=True)
    spare.bind(procs[1], lambda: end_now(procs[1], grace=1.0))
    assert slots.take(optional=True) is None  # full: no more spares
    other = slots.take()  # needed: the idle spare gives its place
    assert procs[1].poll() is not None and spare.promote() is False
    other.release()
    start = time.monotonic()
    slots.take(), slots.take()  # over the cap: the second waits `wait`, then starts anyway
    assert time.monotonic() - start >= 0.4 and slots.peak == 3
    end_now(procs[0], grace=1.0)


def test_early_checks_are_off_by_default_on_a_gpu():
    assert wanted(None, 16) and not wanted(None, 16, gpu=True) and wanted(True, 16, gpu=True)


@pytest.mark.slow
def test_the_health_check_says_plainly_that_the_gpu_does_not_answer(gate, tmp_path):
    """On this machine (no GPU) the fresh process cannot allocate on CUDA: what a broken GPU looks like."""
    import torch
    from rich.console import Console

    from minifier.report.gpu_health import after_run

    if torch.cuda.is_available():
        pytest.skip("the GPU answers here")
    (tmp_path / "report.json").write_text(json.dumps({"status": "reproduced"}))
    console = Console(record=True, width=200)
    health = after_run(tmp_path, console)
    assert health["ok"] is False and health["message"]
    assert json.loads((tmp_path / "report.json").read_text())["gpu_health"] == health
    assert "the GPU does not answer after this run" in console.export_text()


def test_a_gate_named_in_the_environment_is_kept(monkeypatch, tmp_path):
    """Runs pinned to different cards may be given gates of their own; launch must not replace it."""
    mine = tmp_path / "gpu-1.lock"
    monkeypatch.setenv(gpu_gate.GATE_ENV, str(mine))
    assert gpu_gate.enable() == mine and mine.exists()
    monkeypatch.delenv(gpu_gate.GATE_ENV)
    assert gpu_gate.enable() == gpu_gate.default_path()


def test_a_verification_takes_its_slot_before_the_gate_so_a_busy_worker_can_finish(gate, tmp_path, monkeypatch):
    """A worker holds its slot while its job waits for the gate: a verification that took the gate
    first and then waited for a slot stalled until the slot wait ran out."""
    import threading

    from repro import verify

    slots = CudaSlots(cap=1, wait=20.0)
    slots.enable()
    monkeypatch.setattr(verify, "SLOTS", slots)
    gpu_gate.mark_asserting()
    repro = tmp_path / "repro.py"
    repro.write_text("print('REPRODUCED: planted'); raise SystemExit(1)\n")
    busy = slots.take()  # a worker's, busy: its job is about to ask for the gate

    def worker_job():
        time.sleep(0.5)
        with gpu_gate.exclusive():
            time.sleep(0.2)
        busy.release()

    job = threading.Thread(target=worker_job)
    job.start()
    start = time.monotonic()
    verification = verify.run_repro(repro, timeout=60)
    job.join()
    assert verification.reproduced and time.monotonic() - start < 10
