"""Leave a process that has used torch.compile without the interpreter's slow teardown.

After a compile, Python's finalization frees Dynamo's and Inductor's objects one by one: on the
order of a second of CPU, spent after the work is done, on cores (often only two) that the
rest of the run needs. The operating system frees the same memory at once. atexit handlers
(the script's, tempfile's, logging's) still run, and the standard streams are flushed.
"""
from __future__ import annotations

import atexit
import os
import sys


def quick_exit(code: int | None) -> None:
    """Like sys.exit(code) for an int or None."""
    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except BaseException:
                pass
        os._exit(code or 0)
