"""One script of a batch: `minify SCRIPT -o OUT/<name>` in a process of its own, and its summary.

The same function runs in a local thread (`--jobs N`) or as a Dask task on a worker. A worker lost
mid-task: the scheduler gives the task to another worker, which reruns minify into the same
folder. The lost attempt's minify process gets SIGTERM when the worker that started it dies
(PR_SET_PDEATHSIG on Linux) and stops in order; the rerun waits for its hold on the folder
(OUT/<name>/.minify-lock, released by the kernel when it ends), and minify then clears that
earlier run of the same script. One answer per task reaches the client, so no script is
summarised twice or left out.
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from minifier.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED
from minifier.start.out_folder import LOCK

LOCK_WAIT = 120.0  # seconds a rerun waits for a lost attempt's minify to let go of the folder


def _die_with_parent() -> None:
    """In the minify process: end it (SIGTERM, an orderly stop) when its worker dies (Linux)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def wait_for_folder(out: Path, limit: float = LOCK_WAIT) -> None:
    """Until no other minify holds `out` (a lost attempt still stopping), at most `limit` seconds."""
    lock = out / LOCK
    if not lock.is_file():
        return
    deadline = time.monotonic() + limit
    fd = os.open(lock, os.O_RDONLY)
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return  # free: closing the descriptor lets go again at once
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return  # minify itself then says the folder is in use (exit 2)
                time.sleep(0.5)
    finally:
        os.close(fd)


def _worker_name() -> str:
    try:
        from dask.distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return "local"


def summary_row(report: Path) -> dict:
    """bugs, ops before and after, verified: what the table shows, from minify's report.json."""
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        return {"bugs": 0, "ops_before": None, "ops_after": None, "verified": False, "status": None}
    return {"bugs": len(data.get("bugs") or []), "ops_before": data.get("ops_before"),
            "ops_after": data.get("ops_after"), "verified": bool(data.get("verified")), "status": data.get("status")}


def minify_task(script: str, name: str, out: str, args: list[str], cwd: str, root: str) -> dict:
    """Run on a worker (or a local thread): minify one script into OUT/<name>; its summary row."""
    folder, logs = Path(out) / name, Path(out) / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    with open(logs / f"{name}.attempts", "a") as f:  # one line per attempt: a rerun after a lost worker shows
        f.write(f"{_worker_name()} {time.time():.1f}\n")
    wait_for_folder(folder)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
           "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}
    start = time.monotonic()
    with open(logs / f"{name}.log", "w") as log:
        proc = subprocess.run([sys.executable, "-m", "minifier", *args, "-o", str(folder), script],
                              cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                              preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    if proc.returncode < 0 or proc.returncode in (EXIT_INTERRUPTED, EXIT_TERMINATED):  # stopped, not answered
        raise RuntimeError(f"minify {name} was stopped ({proc.returncode}); log {logs / (name + '.log')}")
    return {"script": script, "name": name, "folder": str(folder), "exit": proc.returncode,
            "seconds": round(time.monotonic() - start, 1), "worker": _worker_name(),
            **summary_row(folder / "report.json")}
