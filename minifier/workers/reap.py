"""Ending child processes without waiting for each in turn.

A killed process that held a CUDA context is gone only once the driver has torn that context
down (0.1 to 0.5 s each on the H100). Waited for one after another, that cost 1.5 s at the end
of every GPU run, and after each device-side assert the check's answer waited for its worker's
end. A process no longer wanted is killed there and waited for on a thread of its own.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading


def kill_soon(proc) -> None:
    """SIGKILL `proc` (a Popen, or a zygote's Forked) now and reap it on a daemon thread."""
    with contextlib.suppress(OSError):
        if proc.poll() is None:
            proc.kill()
    threading.Thread(target=_reap, args=(proc,), daemon=True, name="reap").start()


def _reap(proc) -> None:
    with contextlib.suppress(Exception):
        proc.wait()


def kill_group(pgid: int | None) -> None:
    """SIGKILL every process of the group `pgid` (a child started in a session of its own, and
    whatever it started); no wait, nothing said if it is gone. Never this process's own group."""
    if pgid is None or pgid <= 1:
        return
    with contextlib.suppress(OSError):
        if pgid != os.getpgid(0):
            os.killpg(pgid, signal.SIGKILL)


def kill_children() -> None:
    """SIGKILL every child of this process still running, and the group of each that leads one:
    what a stopped run leaves when it exits at once (a process some thread started after the
    stop ended the others). Read from /proc; elsewhere, nothing."""
    me = os.getpid()
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else []:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ppid, pgid = int(fields[1]), int(fields[2])
        if ppid == me:
            kill_group(pgid if pgid == int(entry) else None)
            with contextlib.suppress(OSError):
                os.kill(int(entry), signal.SIGKILL)
