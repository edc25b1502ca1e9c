"""Which of Inductor's kernels a process was running when it died, from Python's fault handler.

A worker enables `faulthandler`: on SIGSEGV, SIGABRT, SIGBUS, SIGFPE or SIGILL it writes each
Python thread's stack to its log before the process dies of the signal (the exit status, and so
the failure's signature, is unchanged). A kernel that crashes was called from a line of the
wrapper Inductor generated (`cpp_fused_add_relu_0(buf0, arg0_1)`, `triton_poi_fused_0.run(...)`);
that line, read from the wrapper's file, names the kernel, and the kernel map of the same graph
(compiler.kernels) gives the nodes it computes: where the reduction of the crash cuts first.
"""
from __future__ import annotations

import contextlib
import os
import re

FRAME = re.compile(r'File "(?P<path>[^"]+\.py)", line (?P<line>\d+)')
KERNEL_CALL = re.compile(r"^\s*(?P<name>(?:cpp|triton)_\w+)(?:\.run)?\(")


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
