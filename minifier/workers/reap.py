"""Ending child processes: SIGTERM, a grace period, then SIGKILL; waited for on a thread or here.

A killed process that held a CUDA context is gone only once the driver has torn that context
down (a fraction of a second each). Waited for one after another, they cost over a second at the
end of every GPU run, so a process no longer wanted is ended on a thread of its own (`kill_soon`).
After a device-side assert its end is waited for here instead (`end_now`), under the GPU gate
(compiler/gpu_gate.py): no other process starts CUDA while that context is torn down.
A CUDA process is never sent SIGKILL first: SIGTERM, then SIGKILL only after GRACE seconds.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time

GRACE = 5.0  # seconds between SIGTERM and SIGKILL
_reapers: list[threading.Thread] = []


def _signal(proc, sig: int) -> None:
    with contextlib.suppress(OSError):
        if proc.poll() is None:
            proc.send_signal(sig)


def end_now(proc, grace: float = GRACE, first_wait: float = 0.0) -> int | None:
    """End `proc` (a Popen, or a zygote's Forked) and wait until it is reaped: given `first_wait`
    seconds to exit by itself (a worker that retired exits so), then SIGTERM, `grace` seconds,
    then SIGKILL. Its exit status, or None if even SIGKILL left it running."""
    for sig, wait in ((None, first_wait), (signal.SIGTERM, grace), (signal.SIGKILL, 30.0)):
        if sig is not None:
            _signal(proc, sig)
        try:
            return proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return None


def kill_soon(proc, grace: float = GRACE) -> None:
    """End `proc` as `end_now` does, on a daemon thread (SIGTERM is sent here, now)."""
    _signal(proc, signal.SIGTERM)
    thread = threading.Thread(target=_reap, args=(proc, grace), daemon=True, name="reap")
    _reapers.append(thread)
    thread.start()


def _reap(proc, grace: float) -> None:
    with contextlib.suppress(Exception):
        end_now(proc, grace)


def wait_reaped(timeout: float = GRACE + 5.0) -> bool:
    """Wait for every process ended with `kill_soon` to be gone (the health check after a GPU run
    must not race their teardown); False if some still were after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    for thread in list(_reapers):
        thread.join(max(0.0, deadline - time.monotonic()))
    _reapers[:] = [t for t in _reapers if t.is_alive()]
    return not _reapers


STOP_GRACE = 1.0  # a stopped run's groups: SIGTERM, at most this long, then SIGKILL (it exits within seconds)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except OSError:
        return False


def kill_group(pgid: int | None, grace: float = STOP_GRACE) -> None:
    """End every process of the group `pgid` (a child started in a session of its own, and
    whatever it started): SIGTERM, up to `grace` seconds for it to go, then SIGKILL; nothing
    said if it is gone. Never this process's own group."""
    if pgid is None or pgid <= 1:
        return
    with contextlib.suppress(OSError):
        if pgid == os.getpgid(0):
            return
        os.killpg(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while _group_alive(pgid) and time.monotonic() < deadline:
        time.sleep(0.02)
    with contextlib.suppress(OSError):
        os.killpg(pgid, signal.SIGKILL)


def _children(me: int) -> list[tuple[int, int]]:
    """(pid, pgid) of every child of `me` still running, read from /proc (elsewhere, none)."""
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            found.append((int(entry), int(fields[2])))
    return found


def kill_children() -> None:
    """End every child of this process still running, and the group of each that leads one:
    what a stopped run leaves when it exits at once (a process some thread started after the
    stop ended the others)."""
    for pid, pgid in _children(os.getpid()):
        if pgid == pid:
            kill_group(pgid)
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
