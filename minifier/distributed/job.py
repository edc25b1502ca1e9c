"""A distributed job under the capture: torchrun starts every rank as compiler.rank_capture, each
recording into FOLDER/rank_R; one timeout for every rank; nothing left running.

torchrun ends the peers of a rank that fails (SIGTERM), and each rank says whether it ended by
itself or was ended so (compiler/rank_capture.py). At the job's timeout minify sends torchrun
SIGTERM (it passes it on to the ranks), waits GRACE, then kills torchrun's session and every
rank's capture session by the process ids the ranks wrote down. What the job recorded is read
as one Capture: the rank that failed (minifier.distributed.ranks chooses it), its graphs and
its ending, with every rank's ending beside it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from minifier.distributed.ranks import RankOutcome, choose_rank, forget_ending, mark_lost_peers, read_outcome
from minifier.workers.interpreters import module_command
from minifier.workers.reap import kill_group
from minifier.workers.stop import STOP

if TYPE_CHECKING:
    from compiler.launch_form import Launch

GRACE = 5.0  # seconds between torchrun's SIGTERM and the SIGKILL of everything the job started
PEER_GRACE = 30.0  # seconds (or a quarter of the run, if longer) the ranks may run on after one has ended


def job_command(program: "Launch", args: list[str], folder: Path, options: "CaptureOptions") -> list[str]:
    """torchrun running compiler.rank_capture on every rank, which runs the capture of the program."""
    base = str(folder.resolve())
    capture = [*module_command("compiler.capture"), *options.flags(), *program.capture_args(), base, "--", *args]
    return [sys.executable, "-m", "torch.distributed.run", *program.torchrun, "--no-python",
            *module_command("compiler.rank_capture"), base, *capture]


@dataclass
class RunningJob:
    """A distributed job under way (start_job), with RunningCapture's interface."""
    proc: subprocess.Popen
    folder: Path
    start: float
    log: "CappedOutput"
    read: Callable  # capture_run's reader of one capture folder
    stop_key: int | None = None
    born: float = field(default_factory=time.monotonic)

    def finish(self, timeout: float, left: float | None = None, hang_after: float | None = None) -> "Capture":
        """Wait for the job (`timeout`: every rank's limit, from the start), end what is left and
        read it. `left`: seconds the run may still take (--max-time). Ranks still running
        PEER_GRACE after another ended (a rank that hangs, its peers waiting on it) are ended.
        `hang_after` is not used: a rank's stuck kernel does not end the job early (a single
        process's capture: minifier.capture.process)."""
        wait = max(0.0, timeout - (time.perf_counter() - self.start))
        cut = left is not None and left < wait
        ended = self._wait(min(wait, max(0.0, left)) if cut else wait)
        self._end()
        STOP.check()
        timed_out = ended == "timeout"
        return read_job(self.read, self.folder, time.perf_counter() - self.start, timeout,
                        timed_out and not cut, "max-time" if timed_out and cut else None)

    def _wait(self, seconds: float) -> str:
        """Wait for torchrun: "done", "timeout", or "peers" (ranks ran on PEER_GRACE after one
        ended: they are ended, and reported as waiting on it)."""
        deadline, first_end = time.monotonic() + seconds, None
        while self.proc.poll() is None:
            now = time.monotonic()
            if now >= deadline:
                return "timeout"
            if first_end is None and any(self.folder.glob("rank_*/outcome.json")):
                first_end = now
            if first_end is not None and now - first_end > max(PEER_GRACE, 0.25 * (now - self.born)):
                return "peers"
            time.sleep(0.1)
        return "done"

    def _end(self) -> None:
        if self.stop_key is not None:
            STOP.forget(self.stop_key)
        end_job(self.proc, self.folder)
        self.log.close()

    def stop(self) -> None:
        self._end()


def end_job(proc: subprocess.Popen, folder: Path) -> None:
    """torchrun SIGTERM (it ends its ranks), GRACE seconds, then SIGKILL of torchrun's session and
    of every rank's and capture's that is still there."""
    if proc.poll() is None:
        with _quiet():
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=GRACE)
        except subprocess.TimeoutExpired:
            pass
    kill_group(proc.pid)
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for info in folder.glob("rank_*/rank.json"):
        try:
            pids = json.loads(info.read_text())
        except (OSError, ValueError):
            continue
        for pid in (pids.get("capture_pid"), pids.get("pid")):
            if isinstance(pid, int) and _ours(pid, folder):
                with _quiet():
                    os.killpg(pid, signal.SIGKILL)
                with _quiet():
                    os.kill(pid, signal.SIGKILL)


def _ours(pid: int, folder: Path) -> bool:
    """Is `pid` still a process of this job (its command names the job's folder)? A pid the
    system has given to another process since is left alone."""
    try:
        return str(folder.resolve()) in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return False


class _quiet:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return exc[0] is not None and issubclass(exc[0], OSError)


def start_job(program: "Launch", args: list[str], folder: Path, out: "CappedOutput", options: "CaptureOptions",
              read: Callable) -> RunningJob:
    """Start torchrun on the program under the capture (see job_command), in a session of its own;
    its output goes to `out`, and `read` (capture_run's reader of one folder) reads each rank."""
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    try:
        proc = subprocess.Popen(job_command(program, args, folder, options), stdout=out.write_end,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=program.cwd,
                                start_new_session=True)
    finally:
        out.started()
    return RunningJob(proc, folder, start, out, read, STOP.on_stop(lambda: end_job(proc, folder)))


def read_job(read: Callable, folder: Path, seconds: float, timeout: float, timed_out: bool,
             stopped: str | None) -> "Capture":
    """The job as one Capture: the chosen rank's (ranks.choose_rank), with `script["ranks"]`
    saying how each rank ended."""
    ranks: list[RankOutcome] = []
    captures = {}
    for rank_dir in sorted(folder.glob("rank_*"), key=lambda p: int(p.name.split("_")[1])):
        outcome = read_outcome(rank_dir, timed_out)
        captures[outcome.rank] = read(rank_dir, outcome.returncode, seconds, timeout, stopped)
        if outcome.waiting and not timed_out:
            forget_ending(captures[outcome.rank])
        ranks.append(outcome)
    if not ranks:  # no rank started: torchrun itself failed (its log says why)
        return read(folder, 1, seconds, timeout, stopped)
    mark_lost_peers(ranks, captures)
    chosen = choose_rank(ranks, captures)
    capture = captures[chosen]
    capture.seconds = seconds
    capture.script["rank"] = chosen
    capture.script["ranks"] = [r.to_dict(captures[r.rank], chosen) for r in ranks]
    return capture
