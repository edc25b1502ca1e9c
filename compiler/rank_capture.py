"""One rank of a distributed job under the capture: `python -m compiler.rank_capture BASE CMD...`.

torchrun starts this once per rank. It runs CMD (the capture, `python -m compiler.capture ...
BASE -- args`) with BASE replaced by BASE/rank_R (R: the RANK torchrun set), so every rank
records its graphs and its ending into a folder of its own, and writes how the rank ended to
BASE/rank_R/outcome.json: its exit status, and whether the job ended it (torchrun's SIGTERM
after a peer failed, or minify's at the job's timeout) rather than it ending by itself. That is
what tells the rank that failed from the peers that were only waiting on it.

The capture runs in a session of its own (a compiled kernel that hangs never sees a Python
signal handler): on SIGTERM this process ends that session, SIGTERM then SIGKILL after GRACE.
An `--inject rank=R:SPEC` is planted on rank R only; on the other ranks it is dropped.
Imports no torch: it costs the rank no start-up.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

GRACE = 3.0  # seconds between SIGTERM and SIGKILL of the capture's session
RANK_PREFIX = "rank="  # `--inject rank=1:relu:accuracy:double`: planted on rank 1 only


def rank_folder(base: Path, rank: str) -> Path:
    return base / f"rank_{rank}"


def rank_injections(command: list[str], rank: str) -> list[str]:
    """`command` with each `--inject rank=R:SPEC` made `--inject SPEC` on rank R, dropped elsewhere."""
    out: list[str] = []
    i = 0
    while i < len(command):
        arg = command[i]
        if arg == "--inject" and i + 1 < len(command) and command[i + 1].startswith(RANK_PREFIX):
            wanted, _, spec = command[i + 1][len(RANK_PREFIX):].partition(":")
            if wanted == rank:
                out += ["--inject", spec]
            i += 2
            continue
        if arg == "--":  # the program's own arguments: never rewritten
            return out + command[i:]
        out.append(arg)
        i += 1
    return out


def _write(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _end_session(pid: int) -> None:
    """SIGTERM the capture's session, GRACE seconds, then SIGKILL (what is gone is skipped)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except OSError:
            return
        deadline = time.monotonic() + GRACE
        while sig == signal.SIGTERM and time.monotonic() < deadline:
            try:
                os.killpg(pid, 0)
            except OSError:
                return
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    base, command = Path(argv[0]), argv[1:]
    rank = os.environ.get("RANK", "0")
    folder = rank_folder(base, rank)
    folder.mkdir(parents=True, exist_ok=True)
    command = [str(folder) if arg == str(base) else arg for arg in rank_injections(command, rank)]
    start = time.monotonic()
    proc = subprocess.Popen(command, start_new_session=True)
    ended: list[str] = []
    _write(folder / "rank.json", {"rank": int(rank), "world_size": int(os.environ.get("WORLD_SIZE", "1")),
                                  "pid": os.getpid(), "capture_pid": proc.pid})

    def on_signal(signum, frame):  # torchrun ends the peers of a failed rank so; minify at the job's timeout
        if not ended:
            ended.append(signal.Signals(signum).name)
            _end_session(proc.pid)

    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    code = proc.wait()
    _end_session(proc.pid)  # whatever the capture started and left
    _write(folder / "outcome.json", {"rank": int(rank), "returncode": code, "ended_by": ended[0] if ended else None,
                                     "seconds": round(time.monotonic() - start, 2)})
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
