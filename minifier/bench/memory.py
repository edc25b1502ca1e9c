"""Peak memory of a command and every process it starts, for the scale benchmark.

A minify run is many processes: the pipeline, the capture of the script, the zygote and the
workers forked from it, the verification. Forked workers share most of their pages with the
zygote, so adding up their resident sizes would count torch many times over; each process's
proportional set size (Pss: a shared page counts 1/n in each of its n processes) adds up to
what the tree really holds. The tree is sampled a few times a second, so a peak shorter than
that can be missed: the figure is a floor, not a bound. Linux only (/proc); elsewhere None.
"""
from __future__ import annotations

import os
import subprocess
import threading
import time
from pathlib import Path

PROC = Path("/proc")


def _children() -> dict[int, list[int]]:
    """Every live process's children, by parent pid."""
    kids: dict[int, list[int]] = {}
    for entry in PROC.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])  # the name in parentheses may hold spaces
        kids.setdefault(ppid, []).append(int(entry.name))
    return kids


def _rollup_kib(pid: int) -> tuple[int, int]:
    """(Pss, Pss_File) of one process, in KiB; (0, 0) when it is gone."""
    found = {}
    try:
        for line in (PROC / str(pid) / "smaps_rollup").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("Pss", "Pss_File"):
                found[key] = int(rest.split()[0])
    except (OSError, ValueError, IndexError):
        pass
    return found.get("Pss", 0), found.get("Pss_File", 0)


def tree_memory_mib(root: int) -> tuple[float, float]:
    """What process `root` and all its descendants hold now, in MiB: all of it (sum of Pss), and
    the part the kernel cannot drop under pressure (Pss less file-backed pages: memory-mapped
    recorded values and torch's own libraries are file pages)."""
    kids, total, files, todo = _children(), 0, 0, [root]
    while todo:
        pid = todo.pop()
        pss, file_pss = _rollup_kib(pid)
        total, files = total + pss, files + file_pss
        todo.extend(kids.get(pid, []))
    return total / 1024, (total - files) / 1024


def tree_pss_mib(root: int) -> float:
    return tree_memory_mib(root)[0]


class PeakSampler:
    """Samples a process tree's memory on a thread until `stop`; `peak` is the largest sample of
    all it holds, `peak_held` of what cannot be dropped (tree_memory_mib)."""

    def __init__(self, proc: subprocess.Popen, every: float = 0.25):
        self.proc, self.every, self.peak, self.peak_held = proc, every, 0.0, 0.0
        self.available = (PROC / str(os.getpid()) / "smaps_rollup").exists()
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        if self.available:
            self._thread.start()

    def _run(self) -> None:
        while not self._done.is_set() and self.proc.poll() is None:
            total, held = tree_memory_mib(self.proc.pid)
            self.peak, self.peak_held = max(self.peak, total), max(self.peak_held, held)
            self._done.wait(self.every)

    def stop(self) -> tuple[float, float] | None:
        self._done.set()
        if self.available:
            self._thread.join()
        return (round(self.peak, 1), round(self.peak_held, 1)) if self.available else None


def run_measured(cmd: list[str], cwd: Path, env: dict, timeout: float, log: Path) -> tuple[int | None, float, tuple | None]:
    """Run `cmd` (output to `log`); (exit code or None on timeout, wall seconds, (peak MiB, peak
    MiB held) or None)."""
    start = time.perf_counter()
    with log.open("w") as sink:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=sink, stderr=subprocess.STDOUT)
        sampler = PeakSampler(proc)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            code = None
        peak = sampler.stop()
    return code, time.perf_counter() - start, peak
