"""The error text a maintainer needs in an issue: the compiler's own error lines for a compile
error, a trimmed traceback for an error at run time, the child's standard error for a crash.

repro.py prints one verdict line; the full text comes from running its compiled call again
without the catch (a crash: its own `--compiled-run` child), in a fresh process with a timeout.
"""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from compiler.boot import COMPILED_CALL

ERROR_KINDS = ("compile_error", "runtime_error", "crash")
MAX_LINES = 20
EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")
COMPILER_ERROR = re.compile(r"\berror\b:|^\s*\d+ \| |^\s+\| +\^")  # gcc/clang: `file:l:c: error: ...`, source, caret


def start(folder: Path, manifest: dict, timeout: float = 180.0) -> "ErrorRun | None":
    """Start the run that shows the error text; None for kinds without one (wrong values, hangs)."""
    kind = manifest.get("kind")
    repro = folder / "repro.py"
    if kind not in ERROR_KINDS or not repro.is_file():
        return None
    if kind == "crash":
        args = [sys.executable, str(repro.resolve()), "--compiled-run"]
    else:
        args = [sys.executable, COMPILED_CALL, str(repro.resolve()), json.dumps(manifest, default=str)]
    return ErrorRun(kind, args, timeout)


class ErrorRun:
    def __init__(self, kind: str, args: list[str], timeout: float):
        self.kind, self.timeout = kind, timeout
        self.cwd = tempfile.TemporaryDirectory(prefix="minify-error-text-")
        self.proc = subprocess.Popen(args, cwd=self.cwd.name, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL, text=True, errors="replace")

    def end(self) -> None:
        """Not wanted after all (its repro's issue is not written)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()
        self.cwd.cleanup()

    def lines(self) -> list[str]:
        """The error text, trimmed; [] when the run showed none (or did not finish in time)."""
        try:
            _, err = self.proc.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.communicate()
            return []
        finally:
            self.cwd.cleanup()
        return trim(self.kind, err, self.proc.returncode)


def trim(kind: str, stderr: str, returncode: int) -> list[str]:
    lines = [line.rstrip() for line in stderr.splitlines() if line.strip()]
    if kind == "crash":
        died = f"(the process died of {_signal_name(-returncode)})" if returncode < 0 else f"(exit status {returncode})"
        tail = [line for line in lines if "Warning" not in line][-MAX_LINES + 1:]
        return tail + [died] if returncode not in (0, 1) else []
    if kind == "compile_error":
        found = compiler_errors(lines)
        if found:
            return found
    return traceback_tail(lines)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def compiler_errors(lines: list[str]) -> list[str]:
    """gcc/clang's `error:` lines with the source line and caret under each, warnings left out."""
    out: list[str] = []
    for i, line in enumerate(lines):
        if re.search(r"\berror\b:", line) and "warning:" not in line:
            out.append(line)
            out += [n for n in lines[i + 1:i + 3] if COMPILER_ERROR.search(n) and "error:" not in n]
    unique = list(dict.fromkeys(out))
    return unique[:MAX_LINES]


def traceback_tail(lines: list[str]) -> list[str]:
    """The last traceback: its last two frames and the exception, `...` where frames were left out."""
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent call last)")]
    if not starts:
        return lines[-MAX_LINES:]
    block = lines[starts[-1]:]
    exc = next((i for i, line in enumerate(block) if i and EXCEPTION_LINE.match(line)), len(block))
    frames = block[1:exc]
    shown = [block[0]] + (["  ..."] if len(frames) > 4 else []) + frames[-4:] + block[exc:exc + MAX_LINES - 6]
    return shown
