"""After a run on a GPU: does the GPU still answer? A fresh process allocates, computes and syncs.

A device-assert run once left an H100 needing a reset ("No CUDA GPUs are available" in every
new process). Whatever minify did, the user must hear it plainly, in the summary and in
report.json ("gpu_health"), not find it with the next program they start.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from compiler import gpu_gate
from compiler.boot import GPU_CHECK
from minifier.workers.reap import GRACE, end_now, wait_reaped

TIMEOUT = 120.0


def gpu_answers(timeout: float = TIMEOUT) -> dict:
    """{"ok", "seconds", "message"} of a fresh `python compiler/boot/gpu_check.py`, run once every
    process this run ended is gone and no minify process holds the GPU gate (compiler/gpu_gate.py)."""
    wait_reaped()
    start = time.perf_counter()
    with gpu_gate.exclusive():
        proc = subprocess.Popen([sys.executable, GPU_CHECK], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, stdin=subprocess.DEVNULL)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            end_now(proc, GRACE)
            out, err = "", f"a fresh process did not allocate and sync within {timeout:.0f} s"
    ok = proc.returncode == 0 and out.strip().endswith("ok")
    lines = (err or out).strip().splitlines()
    message = "a fresh process allocated, computed and synced" if ok else (lines[-1] if lines else
                                                                           f"exit {proc.returncode}")
    return {"ok": ok, "seconds": round(time.perf_counter() - start, 2), "message": message[:500]}


def after_run(out: Path | None, console) -> dict | None:
    """On a GPU run: check the GPU, add the answer to report.json, and say plainly if it failed."""
    if not gpu_gate.enabled():
        return None
    health = gpu_answers()
    report = out / "report.json" if out is not None else None
    try:
        if report is not None and report.exists():
            data = json.loads(report.read_text())
            data["gpu_health"] = health
            report.write_text(json.dumps(data, indent=1, default=str))
    except (OSError, ValueError):
        pass
    if not health["ok"]:
        console.print(f"[bold red]minify: the GPU does not answer after this run[/bold red] ({health['message']}): "
                      f"it may need a reset (nvidia-smi shows it); please report this with {out}/work/logs",
                      highlight=False, soft_wrap=True)
    return health
