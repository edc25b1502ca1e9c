"""Ending child processes without waiting for each in turn.

A killed process that held a CUDA context is gone only once the driver has torn that context
down (0.1 to 0.5 s each on the H100). Waited for one after another, that cost 1.5 s at the end
of every GPU run, and after each device-side assert the check's answer waited for its worker's
end. A process no longer wanted is killed there and waited for on a thread of its own.
"""
from __future__ import annotations

import contextlib
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
