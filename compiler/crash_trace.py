"""Which of Inductor's kernels a process was running when it died or stuck.

A worker enables `faulthandler`: on SIGSEGV, SIGABRT, SIGBUS, SIGFPE or SIGILL it writes each
Python thread's stack to its log before the process dies of the signal (the exit status, and so
the failure's signature, is unchanged). A kernel that crashes was called from a line of the
wrapper Inductor generated (`cpp_fused_add_relu_0(buf0, arg0_1)`, `triton_poi_fused_0.run(...)`);
that line, read from the wrapper's file, names the kernel, and the kernel map of the same graph
(compiler.kernels) gives the nodes it computes: where the reduction of the crash cuts first.

The stacks can come cut short: a C++ kernel that throws in each of its OpenMP threads aborts
in each, and the second abort ends the process while the handler writes the first one's stacks.
So a worker also marks each C++ kernel of the wrappers it compiles (`kernel_marks`): the name
goes into a file of its own while the kernel runs, and is blanked when it returns; what a dead
worker's file still holds is the kernel it died in (`running_kernel`), however it died, or
the one it is stuck in when killed as hung. The capture marks the script's kernels too: one
running past --hang-timeout ends the script as a hang then, not at --timeout's end.
"""
from __future__ import annotations

import contextlib
import functools
import mmap
import os
import re
import time
from pathlib import Path
from typing import Iterator

FRAME = re.compile(r'File "(?P<path>[^"]+\.py)", line (?P<line>\d+)')
KERNEL_CALL = re.compile(r"^\s*(?P<name>(?:cpp|triton)_\w+)(?:\.run)?\(")
CPP_KERNEL = re.compile(r"cpp_\w+")
MARK_WIDTH = 256  # bytes of the marks file, rewritten in place: it never grows
CAPTURE_MARKS = "kernel-running"  # the capture's marks file, in its folder


def marks_path(folder: str | Path, pid: int) -> Path:
    """Where the worker `pid`, run from `folder`, marks the C++ kernel it runs now."""
    return Path(folder) / f"kernel-running-{pid}"


def running_kernel(path: Path) -> str | None:
    """The kernel a dead worker's marks file names: the one it was running when it died."""
    mark = kernel_mark(path)
    return mark[0] if mark else None


def kernel_mark(path: Path) -> tuple[str, float] | None:
    """The kernel a marks file names and when it started (time.time()); None if none runs. Read
    while the process writes, a mark can be half written: whoever acts on one reads it twice."""
    with contextlib.suppress(OSError, ValueError):
        name, since = path.read_bytes().replace(b"\0", b" ").decode("utf-8", "replace").split()
        return name, float(since)
    return None


@contextlib.contextmanager
def kernel_marks(path: Path) -> Iterator[None]:
    """Each wrapper Inductor compiles meanwhile calls its C++ kernels through `mark_kernels`."""
    from torch._inductor.graph import GraphLowering

    marks = _marks_map(str(path))
    original = GraphLowering.compile_to_module

    def compile_to_module(self):
        module = original(self)
        mark_kernels(module, marks)
        return module

    GraphLowering.compile_to_module = compile_to_module
    try:
        yield
    finally:
        GraphLowering.compile_to_module = original


@functools.cache
def _marks_map(path: str) -> mmap.mmap:
    """The marks file mapped into memory, once per process and kept: a compiled wrapper may run
    after its compile. A mark is a memory write, no system call (about 1.5 us a kernel call);
    what the process wrote stays in the file when it dies. It starts as zero bytes: a blank
    (spaces) shows that a kernel ran marked."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
    os.ftruncate(fd, MARK_WIDTH)
    marks = mmap.mmap(fd, MARK_WIDTH)
    os.close(fd)
    return marks


def mark_kernels(module, marks) -> None:
    """Wrap the module's C++ kernels (globals `cpp_*`, looked up by its `call` when it runs) so
    each writes its name and the time into `marks` (a mapped marks file, or any bytearray of
    MARK_WIDTH) before it runs and blanks them when it returns or raises: a kernel named there
    for long is stuck (the capture's hang, minifier.capture)."""
    for name, kernel in list(getattr(module, "__dict__", {}).items()):
        if CPP_KERNEL.fullmatch(name) and callable(kernel) and not isinstance(kernel, type):
            setattr(module, name, _marked(kernel, name.encode()[:MARK_WIDTH - 32], marks))


def _marked(kernel, name: bytes, marks):
    def run(*args, **kwargs):
        mark = b"%s %.3f" % (name, time.time())
        marks[:len(mark)] = mark
        try:
            return kernel(*args, **kwargs)
        finally:
            marks[:len(mark)] = b" " * len(mark)
    return run


def crashed_kernel(dump: str) -> str | None:
    """The kernel called by the first frame of `dump` (a fault handler's stacks) that calls one."""
    for frame in FRAME.finditer(dump):
        line = _line_of(frame.group("path"), int(frame.group("line")))
        called = KERNEL_CALL.match(line or "")
        if called:
            return called.group("name")
    return None


def _line_of(path: str, number: int) -> str | None:
    with contextlib.suppress(OSError, UnicodeDecodeError):
        with open(path, encoding="utf-8") as f:
            for i, line in enumerate(f, 1):
                if i == number:
                    return line
    return None


def log_size(path: str) -> int:
    """How long a worker's log is now: what it writes after this is the next job's."""
    with contextlib.suppress(OSError):
        return os.path.getsize(path)
    return 0


def logged_since(path: str, offset: int, limit: int = 1 << 18) -> str:
    """What a worker's log gained since `offset`, at most `limit` bytes of it."""
    with contextlib.suppress(OSError):
        with open(path, "rb") as f:
            f.seek(offset)
            return f.read(limit).decode("utf-8", "replace")
    return ""
