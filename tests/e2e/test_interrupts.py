"""Ctrl-C, SIGTERM and --max-time on a real `python -m minifier` run (issue 44, "nothing lost,
nothing invented"): the run stops within seconds wherever it is, says where in report.json,
leaves no process behind, and no work the stop ended becomes a finding. The signal goes to the
whole process group, as a terminal's Ctrl-C does; timings are driven by what the run prints."""
import json
import os
import queue
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT

from minifier.exit_codes import EXIT_INTERRUPTED, EXIT_MAX_TIME, EXIT_NOTHING_FAILED, EXIT_TERMINATED

STOP_WITHIN = 5.0  # seconds from the signal to minify's exit

# Compiles once, says so in a file (argv[1]), then sleeps: a capture that goes on after its compiled call.
# It starts a process of its own first, which must not outlive the run.
SLEEPS_AFTER_COMPILING = textwrap.dedent("""\
    import pathlib, subprocess, sys, time
    import torch
    subprocess.Popen(["sleep", "300"])
    f = torch.compile(lambda x: x * 2)
    f(torch.ones(3))
    pathlib.Path(sys.argv[1]).write_text("compiled")
    time.sleep(600)
    """)


class Run:
    """`python -m minifier ARGS` in a session of its own (so that the test can signal its group
    as a terminal would), its progress lines (standard error) read on a thread."""

    def __init__(self, args: list[str], cwd: Path):
        env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
        # SIGINT as a terminal's Ctrl-C finds it: a runner started in the background has it ignored
        self.proc = subprocess.Popen([sys.executable, "-m", "minifier", *args], cwd=cwd, env=env, text=True,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True,
                                     preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
        self.lines: queue.Queue = queue.Queue()
        self.seen: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.put(line)
        self.lines.put(None)

    def wait_for(self, text: str, timeout: float = 300) -> str:
        """The first progress line holding `text` (the run is at that point now)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line is not None, f"the run ended before {text!r}: {''.join(self.seen)}"
            self.seen.append(line)
            if text in line:
                return line

    def signal(self, sig: int, group: bool = True) -> float:
        """Send `sig` (to the whole group, as a terminal does); when it was sent."""
        os.killpg(self.proc.pid, sig) if group else self.proc.send_signal(sig)
        return time.monotonic()

    def finish(self, timeout: float = 60) -> tuple[int, str, float]:
        """Exit status, what it printed (standard output, then the standard error not yet read:
        its one-line errors go there), and when it exited (time.monotonic())."""
        stdout = self.proc.stdout.read() if self.proc.wait(timeout) is not None else ""
        ended = time.monotonic()
        rest = []
        while (line := self.lines.get(timeout=10)) is not None:
            rest.append(line)
        self.lines.put(None)
        return self.proc.returncode, stdout + "".join(rest), ended

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)


def leftovers(*roots: Path, wait: float = 3.0) -> list[str]:
    """Processes still alive (after up to `wait` s) whose command line or working directory is
    under one of `roots`: the script's own children run in its folder, minify's hold its output folder."""
    deadline = time.monotonic() + wait
    while True:
        found = []
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                cwd = os.readlink(f"/proc/{pid}/cwd")
            except OSError:  # gone, or a zombie
                continue
            if any(str(r) in cmdline or cwd.startswith(str(r)) for r in roots):
                found.append(f"{pid} {cmdline[:120]} (in {cwd})")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def _kill_leftovers(found: list[str]) -> None:
    for row in found:  # only the processes this test's run left, by their ids
        try:
            os.kill(int(row.split()[0]), signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture
def sleepy(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    script = home / "sleepy.py"
    script.write_text(SLEEPS_AFTER_COMPILING)
    yield home, script, tmp_path / "out"
    _kill_leftovers(leftovers(tmp_path, wait=0))


@pytest.mark.parametrize("signals", [["SIGINT"], ["SIGTERM"], ["SIGINT", "SIGINT"]],
                         ids=["ctrl-c", "sigterm", "ctrl-c-twice"])
def test_a_signal_during_the_capture_stops_the_run_and_its_script(sleepy, signals):
    """During the capture of a script that sleeps after its compiled call (and started a process of
    its own): out within 5 s, 130 (143 for SIGTERM, sent to minify alone as a batch system may),
    report.json says it was interrupted there, and neither the script nor its child is left."""
    home, script, out = sleepy
    flag = home / "compiled"
    run = Run([str(script), "-o", str(out), "--", str(flag)], home)
    try:
        run.wait_for("under the recording backend")
        deadline = time.monotonic() + 240
        while not flag.exists() and time.monotonic() < deadline and run.proc.poll() is None:
            time.sleep(0.2)
        assert flag.exists(), "the script never got past its compiled call"
        sent = run.signal(getattr(signal, signals[0]), group=signals[0] == "SIGINT")
        for name in signals[1:]:
            time.sleep(0.05)  # the second Ctrl-C: out at once
            run.signal(getattr(signal, name))
        code, stdout, ended = run.finish()
    finally:
        run.kill()
    assert ended - sent < STOP_WITHIN, f"took {ended - sent:.1f} s to stop"
    assert code == (EXIT_TERMINATED if signals == ["SIGTERM"] else EXIT_INTERRUPTED), stdout
    assert leftovers(home, out) == []
    if len(signals) == 1:  # an orderly stop: the line, and report.json saying where
        assert "--resume" in stdout and str(out) in stdout and "under the recording backend" in stdout, stdout
        report = json.loads((out / "report.json").read_text())
        assert report["status"] == "interrupted" and report["stopped"] == ("terminated" if signals == ["SIGTERM"]
                                                                           else "interrupted")
        assert "under the recording backend" in report["where"]


def test_ctrl_c_during_the_reduction_adds_no_finding_and_resume_says_what_it_reuses(tmp_path):
    """Ctrl-C once a corpus case is being reduced (its first step kept and checkpointed; with relu's
    short reduction the signal may find it verifying or blaming instead): out within 5 s, report.json says where, no bug
    comes of the workers the stop killed (it read as crash@inductor|SIGKILL, reproduced 0/3), no
    process is left; `--resume` then says what it reuses (and a Ctrl-C stops it too)."""
    out = tmp_path / "out"
    script = CORPUS / "relu_accuracy.py"
    run = Run([str(script), "-o", str(out)], tmp_path)
    try:
        where = run.wait_for("ops left")
        sent = run.signal(signal.SIGINT)
        code, stdout, ended = run.finish()
    finally:
        run.kill()
    assert ended - sent < STOP_WITHIN, f"took {ended - sent:.1f} s to stop"
    assert code == EXIT_INTERRUPTED, stdout
    text = (out / "report.json").read_text()
    report = json.loads(text)
    assert report["status"] == "interrupted" and report["failing_graphs"] == [0]
    assert report["where"] and report["where"] in "".join(run.seen) + where
    assert "SIGKILL" not in text and "crash" not in text and not list(out.glob("bug-*"))
    assert all(row["verified"] for row in report["verified"])  # only what was verified before the stop
    assert leftovers(out) == []
    again = Run([str(script), "-o", str(out), "--resume"], tmp_path)
    try:
        line = again.wait_for("--resume:")
        again.wait_for("starting workers")
        sent = again.signal(signal.SIGINT)
        code, _, ended = again.finish()
    finally:
        again.kill()
    assert "checkpoint" in line and "cached answer" in line, line
    assert code == EXIT_INTERRUPTED and ended - sent < STOP_WITHIN
    assert leftovers(out) == []


def test_max_time_bounds_a_script_that_hangs_after_its_compiled_call(sleepy):
    """--max-time counts the capture too: the script (and its child) is ended when it runs out, and
    the run says so with its own exit status, instead of waiting for --timeout (30 min)."""
    home, script, out = sleepy
    start = time.monotonic()
    run = Run([str(script), "-o", str(out), "--max-time", "30", "--", str(home / "compiled")], home)
    try:
        code, stdout, ended = run.finish(timeout=90)
    finally:
        run.kill()
    assert ended - start < 30 + 8, f"took {ended - start:.0f} s"
    assert code == EXIT_MAX_TIME and "--max-time" in stdout, stdout
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "stopped" and report["stopped"] == "max-time"
    assert leftovers(home, out) == []


def test_a_script_leaves_no_process_and_its_output_is_capped(tmp_path):
    """A script that starts `sleep 300` with subprocess.Popen and prints 20 MB, run to its end
    (nothing fails: minify runs it again without the compiler): no sleep outlives the run, and
    work/ keeps the head and tail of its output, saying how much was cut."""
    home = tmp_path / "home"
    home.mkdir()
    script = home / "noisy.py"
    script.write_text(textwrap.dedent("""\
        import subprocess, sys
        import torch
        subprocess.Popen(["sleep", "300"])
        line = "x" * 99 + "\\n"
        for _ in range(200_000):  # 20 MB
            sys.stdout.write(line)
        print(torch.compile(lambda x: x * 2)(torch.ones(3)))
        """))
    out = tmp_path / "out"
    run = Run([str(script), "-o", str(out), "--no-verify", "--no-blame"], home)
    try:
        code, stdout, _ = run.finish(timeout=400)
    finally:
        run.kill()
    assert code == EXIT_NOTHING_FAILED, stdout + "".join(run.seen)
    try:
        assert leftovers(home, out, wait=10) == []  # the sleeps (one per run of the script) are gone
    finally:
        _kill_leftovers(leftovers(home, out, wait=0))
    size = sum(p.stat().st_size for p in (out / "work").rglob("*") if p.is_file())
    assert size < 12 << 20, f"work/ holds {size >> 20} MiB"
    log = (out / "work" / "script.log").read_text()
    assert "bytes of output cut here" in log and log.count("x" * 99) < 30_000
