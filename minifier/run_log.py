"""The run's log: the standard error of minify and of every process it starts."""
from __future__ import annotations

import os
import sys
from pathlib import Path


class RunLog:
    """From here on, everything this process writes to its standard error (file descriptor 2)
    goes to `path`: torch's own log lines (`W1124 ...`), Python warnings, C++ warnings, and
    tracebacks. The console keeps the real standard error, as `console`, for our display only.
    Processes started later inherit the log as their standard error too."""

    def __init__(self, path: Path, version: str):
        self.path = path
        sys.stderr.flush()
        saved = os.dup(2)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.dup2(fd, 2)
        os.close(fd)
        self.console = os.fdopen(saved, "w", buffering=1, encoding=sys.stderr.encoding, errors="replace")
        from minifier.report.terminal import StandardError

        StandardError.keep(self.console)  # minify's one-line errors still reach the user
        print(f"minify {version}: {' '.join(sys.argv)}", file=sys.stderr, flush=True)
