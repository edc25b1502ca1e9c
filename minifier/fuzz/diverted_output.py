"""Standard output and error diverted to the campaign's log while it runs (moved out of
minifier.fuzz.command, unchanged, to keep that module under the size limit)."""
from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path


@contextlib.contextmanager
def diverted_output(log: Path):
    """File descriptors 1 and 2 go to `log` while the campaign runs: what C++ libraries print
    (MKL's LAPACK errors on NaN input, torch's C++ warnings), Python warnings and worker logs.
    Yields text files on the real standard output and error, for minify's own display."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    real = [os.fdopen(os.dup(f), "w", buffering=1, encoding="utf-8", errors="replace") for f in saved]
    try:
        yield real
    finally:
        for f in real:
            f.close()
        sys.stdout.flush()
        sys.stderr.flush()
        for target, f in zip((1, 2), saved):
            os.dup2(f, target)
            os.close(f)
