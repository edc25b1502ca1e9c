"""Start the capture process on the user's script and read back what it recorded."""
from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from compiler.capture_record import CaptureSchemaError, CapturedGraph, ScriptEnding, read
from compiler.crash_trace import CAPTURE_MARKS, kernel_mark
from compiler.judging import Judging
from compiler.launch_form import Launch
from compiler.signature import crash_signature, hang_signature
from minifier.workers.interpreters import module_command
from minifier.workers.reap import kill_group
from minifier.workers.stop import STOP

if TYPE_CHECKING:
    from minifier.workers.zygote import Zygote


@dataclass
class GraphRecord:
    index: int
    folder: Path
    nodes: int
    record: dict
    failure: dict | None = None

    @property
    def replayable(self) -> bool:
        return "unsupported" not in self.record and (self.folder / "inputs.pt").exists()

    @property
    def part(self) -> str:
        """`forward` (a Dynamo graph) or `backward` (AOTAutograd's backward graph of one)."""
        return self.record.get("part", "forward")

    @property
    def key(self) -> str:
        """Names the graph across runs of the script (`3`, `3.bw`), for `--only`."""
        return self.record.get("key", str(self.index))

    @property
    def dynamo_graph(self) -> int:
        return self.record.get("dynamo_graph", self.index)

    def node_rows(self) -> list[dict]:
        """nodes.json: each computing node in graph order with its line in the script."""
        path = self.folder / "nodes.json"
        return json.loads(path.read_text()) if path.exists() else []


@dataclass
class Capture:
    graphs: list[GraphRecord]
    script: dict  # how the script ended: ok / exit / error / crash / hang
    seconds: float
    injections: list[dict] = field(default_factory=list)
    folder: Path | None = None
    stopped: str | None = None  # "max-time": the run's time ran out while the script ran, and it was ended

    @property
    def failing(self) -> list[GraphRecord]:
        return [g for g in self.graphs if g.failure]

    @property
    def calls_dir(self) -> Path | None:
        """First outputs of each compiled callable (calls/N.pt), for the end-to-end check."""
        return None if self.folder is None else self.folder / "calls"


def run_capture(script: Launch | Path, args: list[str], folder: Path, log: Path, timeout: float,
                eager: bool = False, injections: list[str] = (), only: list[str] | None = None,
                backend: str | None = None) -> Capture:
    """Run the program (a script's path, or how it is launched: compiler.launch_form) under the
    recording backend (or, with `eager`, with nothing compiled),
    with the bugs named by `injections` (spec strings) planted before it starts. With `only`,
    compile just the graphs with those keys and record nothing (a subset run); with `backend`,
    compile everything with that backend and record nothing (a program-level stage run)."""
    options = CaptureOptions(eager=eager, injections=injections, only=only, backend=backend)
    return start_capture(script, args, folder, log, options).finish(timeout)


@dataclass(frozen=True)
class CaptureOptions:
    """How the capture runs the script (see run_capture): `eager` compiles nothing; `injections`
    (spec strings) are planted first; `only`: compile just the graphs with these keys; `backend`:
    compile everything with it; `judging`: how the capture's checks judge (the run's)."""
    eager: bool = False
    injections: list[str] = ()
    only: list[str] | None = None
    backend: str | None = None
    judging: Judging = Judging()

    def flags(self) -> list[str]:
        """compiler.capture's options for these (they go before its positionals)."""
        return [*(["--eager"] if self.eager else []),
                *(["--only", ",".join(self.only)] if self.only is not None else []),
                *(["--backend", self.backend] if self.backend is not None else []),
                *[arg for spec in self.injections for arg in ("--inject", spec)],
                *(["--judging", json.dumps(self.judging.to_dict())] if self.judging != Judging() else [])]


OUTPUT_CAP = 1 << 20  # bytes of the script's output kept in its log, at each end


class CappedOutput:
    """The script's output (stdout and stderr) on its way to its log in work/: the first and the
    last OUTPUT_CAP bytes, and a line saying how much was cut between (a script that printed
    60 MB left 195 MB of copies). The head is written as it comes, the tail when the run ends."""

    def __init__(self, path: Path):
        self.file = open(path, "wb")
        self.read_end, self.write_end = os.pipe()
        self.head_left, self.tail, self.cut = OUTPUT_CAP, bytearray(), 0
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._drain, daemon=True, name="script-output")

    def started(self) -> None:
        """The process has its end of the pipe: drop ours and read."""
        os.close(self.write_end)
        self.thread.start()

    def _drain(self) -> None:
        with os.fdopen(self.read_end, "rb", buffering=0) as source:
            while chunk := source.read(1 << 16):
                with self.lock:
                    if self.file.closed:
                        continue
                    head = chunk[:self.head_left]
                    if head:
                        self.file.write(head)
                        self.file.flush()
                        self.head_left -= len(head)
                    self.tail += chunk[len(head):]
                    if len(self.tail) > OUTPUT_CAP:
                        self.cut += len(self.tail) - OUTPUT_CAP
                        del self.tail[:len(self.tail) - OUTPUT_CAP]

    def close(self, wait: float = 2.0) -> None:
        """Write the tail (after what was cut) and close; output still coming after `wait`
        seconds (a process that kept the pipe open) is not waited for."""
        if self.thread.is_alive():
            self.thread.join(wait)
        with self.lock:
            if self.file.closed:
                return
            if self.cut:
                self.file.write(f"\n[minify: {self.cut} bytes of output cut here; the first and last "
                                f"{OUTPUT_CAP} bytes are kept]\n".encode())
            self.file.write(self.tail)
            self.file.close()


@dataclass
class RunningCapture:
    """A capture process under way (start_capture); `finish` waits for it and reads it. It runs
    in a session of its own: the script and every process it started are one group, ended
    together when the capture ends (no orphans) or the run stops."""
    proc: subprocess.Popen
    folder: Path
    start: float
    log: CappedOutput
    stop_key: int | None = None

    def finish(self, timeout: float, left: float | None = None, hang_after: float | None = None) -> Capture:
        """Wait for it (`timeout`: the script's limit, from its start) and read what it recorded.
        `left`: seconds the run may still take (--max-time); a script still running then is
        ended and the capture says it `stopped`, not that the script hung. `hang_after`
        (--hang-timeout): a C++ kernel of the script's running longer hangs it now."""
        wait = max(0.0, timeout - (time.perf_counter() - self.start))
        cut = left is not None and left < wait
        code, stuck = self._wait(max(0.0, left) if cut else wait, hang_after)
        self._end()
        STOP.check()  # ended by a stop: what it recorded is read by no one
        stopped = "max-time" if code is None and cut and stuck is None else None
        hang = f"its kernel {stuck} ran past {hang_after:g} s (--hang-timeout)" if stuck else None
        return _read_capture(self.folder, code, time.perf_counter() - self.start, timeout, stopped, hang)

    def _wait(self, limit: float, hang_after: float | None) -> tuple[int | None, str | None]:
        """The script's exit code, or None at `limit`; or None and the kernel it is stuck in, once
        the capture's marks file (compiler/crash_trace.py) has named one for `hang_after` s (the
        same mark read twice a second apart: never one half written)."""
        end, last = time.perf_counter() + limit, None
        while True:
            try:
                return self.proc.wait(timeout=max(0.0, min(1.0, end - time.perf_counter()))), None
            except subprocess.TimeoutExpired:
                pass
            mark = kernel_mark(self.folder / CAPTURE_MARKS) if hang_after is not None else None
            if mark is not None and mark == last and time.time() - mark[1] > hang_after:
                return None, mark[0]
            last = mark
            if time.perf_counter() >= end:
                return None, None

    def _end(self) -> None:
        """End the script's group (the capture, and whatever the script started), then the log
        and the marks file (read by now)."""
        if self.stop_key is not None:
            STOP.forget(self.stop_key)
        kill_group(self.proc.pid)
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.log.close()
        (self.folder / CAPTURE_MARKS).unlink(missing_ok=True)

    def stop(self) -> None:
        """Kill it if it is still running (the run ended another way)."""
        self._end()


def start_capture(script: Launch | Path, args: list[str], folder: Path, log: Path,
                  options: CaptureOptions = CaptureOptions(), host: Zygote | None = None) -> RunningCapture:
    """Start the capture process (see run_capture) without waiting for it. With `host` (a
    zygote not started yet), the capture starts it once torch is imported: one start-up
    for both, and the capture's own is no slower."""
    program = script if isinstance(script, Launch) else Launch.script(script)
    if program.torchrun:  # a distributed job: every rank under the capture (minify torchrun)
        from minifier.distributed.job import start_job
        folder.mkdir(parents=True, exist_ok=True)
        return start_job(program, args, folder, CappedOutput(log), options, _read_capture)
    folder.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    out = CappedOutput(log)
    # Options before the positionals: after them, argparse's REMAINDER would take them as script args.
    command = [*module_command("compiler.capture"), *options.flags(), *program.capture_args(), str(folder.resolve()),
               "--", *args]
    fds: tuple[int, ...] = ()
    if host is not None:
        command, fds = host.host_command(command)
    try:
        proc = subprocess.Popen(command, stdout=out.write_end, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=program.cwd, pass_fds=fds, start_new_session=True)
    finally:
        out.started()
        if host is not None:
            host.hosted_started()
    return RunningCapture(proc, folder, start, out, STOP.on_stop(lambda: kill_group(proc.pid)))


def _read_capture(folder: Path, code: int | None, seconds: float, timeout: float,
                  stopped: str | None = None, hang: str | None = None) -> Capture:
    """What the capture left in `folder`; CaptureSchemaError where a record is of another schema
    version (a folder an older or newer minify wrote: compiler/capture_record.py)."""
    graphs = _read_graphs(folder)
    script_file = folder / "script.json"
    ending = read(ScriptEnding, script_file) if script_file.exists() and code == 0 else None
    if ending is not None:
        script_result = ending.to_dict()
    elif stopped:  # ended by minify, not by the script: no crash, no hang
        script_result = {"status": "stopped", "message": f"ended after {seconds:.0f} s: the run's --max-time ran out",
                         "returncode": None}
    else:
        kind, sig, msg = crash_signature(code, "inductor") if code is not None else hang_signature(timeout, "inductor")
        if code is None:
            msg = hang or f"did not finish within {timeout:g} s (--timeout)"
        script_result = {"status": kind, "message": msg, "returncode": code}
        marker = folder / "calling"
        if marker.exists() and graphs:
            culprit = graphs[int(marker.read_text())]
            if not culprit.failure:
                culprit.failure = {"kind": kind, "signature": sig, "message": msg, "when": "run"}
    injections = next((g.record.get("injections") for g in graphs if g.record.get("injections")), [])
    injections = (ending.injections if ending is not None else None) or injections
    return Capture(graphs, script_result, seconds, injections, folder, stopped)


def _read_graphs(folder: Path) -> list[GraphRecord]:
    graphs = []
    for path in sorted(folder.glob("graph_*"), key=lambda p: int(p.name.split("_")[1])):
        try:
            record = read(CapturedGraph, path / "record.json")
        except CaptureSchemaError:
            raise
        except (OSError, ValueError):  # the script was ended while this graph was being written
            continue
        graphs.append(GraphRecord(record.index, path, record.nodes, record.to_dict(), record.failure))
    return graphs
