"""`python -m torch.utils.collect_env`, what PyTorch's bug template asks for under Versions: run
once per minify run, in the background (it takes seconds), with a timeout; where it cannot run,
the torch, Python and OS versions instead."""
from __future__ import annotations

import subprocess
import sys

TIMEOUT = 60.0
_run: subprocess.Popen | None = None
_text: str | None = None  # collected once per process: the environment does not change


def start() -> None:
    """Start collect_env now (once), so that its output is ready when issue.md is written."""
    global _run
    if _run is None and _text is None:
        try:
            _run = subprocess.Popen([sys.executable, "-m", "torch.utils.collect_env"], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, errors="replace")
        except OSError:
            _run = None


def collect_env(timeout: float = TIMEOUT) -> str | None:
    """collect_env's report (started here if start() was not called), or None."""
    global _run, _text
    if _text is not None:
        return _text
    start()
    if _run is None:
        return None
    try:
        out, _ = _run.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _run.kill()
        _run.communicate()
        out = ""
    ok = _run.returncode == 0
    _run = None
    text = out.replace("Collecting environment information...\n", "").strip()
    _text = text if ok and text else None
    return _text
