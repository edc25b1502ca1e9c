"""One GPU, one device-side assert at a time: a machine-wide lock that minify's processes share.

On an H100 a tiny BERT with a planted device assert left the GPU needing a reset: several of
minify's processes were asserting, starting CUDA or tearing an asserted context down at the same
moment, and new ones hung in the driver's locks. The gate is an flock on one file
(MINIFY_GPU_GATE, set by launch on a GPU machine and inherited by every process minify starts):

- shared, for as long as a process creates its CUDA context (`starting_cuda`);
- exclusive, held by minify's main process while a process runs code of a graph known to
  device-assert, and until that process is reaped (its context torn down) (`exclusive`);
- exclusive, held by the capture from the moment it sees its script's graph poison CUDA until
  it exits (`hold_until_exit`).

A flock belongs to an open file, so two threads of one process exclude each other as two
processes do. Without MINIFY_GPU_GATE (a CPU machine) every call here does nothing.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import threading
import time
from pathlib import Path

GATE_ENV = "MINIFY_GPU_GATE"
# What a device-side assert or a fault leaves in a failure's text: the process's CUDA context is spoiled.
POISONING = ("device-side assert", "CUDA error", "AcceleratorError", "an illegal memory access")
_asserting = threading.Event()  # this process has seen a graph poison CUDA: its GPU work runs one at a time


def poisons(text: str) -> bool:
    return any(mark in text for mark in POISONING)


def default_path() -> Path:
    """One gate for the machine (every GPU on it): two runs on one host never assert at once."""
    return Path(tempfile.gettempdir()) / "minify-gpu.lock"


def gpu_present() -> bool:
    """An NVIDIA or AMD GPU device node, looked at without importing torch."""
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/kfd")


def enable(path: Path | None = None) -> Path:
    """Turn the gate on for this process and every process it starts from now on. A gate already
    named in the environment is kept: on a host of several GPUs, runs pinned to different cards
    (CUDA_VISIBLE_DEVICES) may each be given a gate of their own (docs/gpu-safety.md)."""
    path = Path(path or os.environ.get(GATE_ENV) or default_path())
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    os.close(fd)
    with contextlib.suppress(OSError):  # another user's run shares it
        os.chmod(path, 0o666)
    os.environ[GATE_ENV] = str(path)
    return path


def enabled() -> bool:
    return bool(os.environ.get(GATE_ENV))


def _open() -> int | None:
    path = os.environ.get(GATE_ENV)
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666) if path else None


# The longest wait for the gate before going on without it: a process that inherited it and lives on
# (a script's forked child) must not stall the run for good. Shared: a CUDA start waits out one assert.
WAIT_SHARED, WAIT_EXCLUSIVE = 300.0, 1800.0


def _take(fd: int, exclusive: bool, wait: float) -> bool:
    """flock, polled so that the wait is bounded; False if not taken within `wait` seconds."""
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.02)


@contextlib.contextmanager
def held(exclusive: bool, wait: float | None = None):
    """The gate, shared or exclusive, for the block (nothing without a gate)."""
    fd = _open()
    try:
        if fd is not None:
            _take(fd, exclusive, wait if wait is not None else WAIT_EXCLUSIVE if exclusive else WAIT_SHARED)
        yield
    finally:
        if fd is not None:
            os.close(fd)


def starting_cuda():
    """Held while this process creates its CUDA context: never beside an assert or its teardown."""
    return held(False)


def exclusive():
    return held(True)


def mark_asserting() -> None:
    """A graph of this run poisons CUDA: from now on each GPU job takes the gate exclusively."""
    _asserting.set()


def asserting() -> bool:
    return enabled() and _asserting.is_set()


def for_job():
    """What a GPU job of this run holds: the gate exclusively once the run has seen an assert."""
    return held(True) if asserting() else contextlib.nullcontext()


def hold_if_poisoned(text: str) -> bool:
    """In the capture: a failure whose `text` says CUDA is spoiled holds the gate until exit."""
    return poisons(text) and hold_until_exit()


def hold_until_exit(wait: float = 60.0) -> bool:
    """Take the gate exclusively and keep it until this process ends (the capture, which just
    saw its script poison CUDA: no other process may start CUDA until its context is gone).
    Waits at most `wait` seconds (a job of minify's may hold it); False if it could not."""
    fd = _open()
    if fd is None:
        return False
    if _take(fd, True, wait):
        return True  # fd left open: the kernel releases it when the process ends
    os.close(fd)
    return False
