"""The process that runs blame experiments on one repro folder (minifier/blame/search.py drives it).

Run as `python -m minifier.blame.probe_worker REPRO_DIR`: it rebuilds the folder's repro from
repro.json (the graph and inputs, the script's Inductor config set and any injected bug
planted, as `python repro.py` has them; repro/runner.py), then answers experiments read one
JSON line at a time from stdin, each judged by minify's oracle as the repro was judged. Answers go to stdout as lines
starting with MARK (anything else a compile prints there is ignored). Torch is imported once,
so each experiment costs one compile of a minimal graph.

`BlameWorker` is the parent's side: it keeps one child for all experiments, or starts a fresh
child per experiment (`isolate`, for crashes and hangs); a child that dies or stops answering
yields the crash or hang outcome the repro would have shown.
"""
from __future__ import annotations

import contextlib
import json
import os
import queue
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

MARK = "MINIFY-BLAME "
ROOT = Path(__file__).resolve().parents[2]
STARTUP_TIMEOUT = 300.0


@dataclass
class LoadedRepro:
    module: object  # repro/runner.py's load: Repro, make_inputs, COMPILE, CONTEXT, CHECK
    oracle: object  # repro/runner.py: run_check
    manifest: dict
    defaults: dict  # Inductor config before repro.py changed it


def load_repro(folder: Path) -> LoadedRepro:
    """The repro as `python repro.py` runs it (config set, bug planted), from repro.json."""
    from compiler.subsystems import config_defaults
    from repro import runner

    defaults = config_defaults()
    module = runner.load(folder)
    return LoadedRepro(module, runner, module.manifest, defaults)


def streaming_record():
    """A Record that also sends each entry to the parent as it happens: a compile or kernel
    that kills the process (crash kinds) must not take the record of what was applied with it."""
    from compiler.subsystems import Record

    class StreamingRecord(Record):
        def add_call(self, subsystem: str, name: str) -> None:
            super().add_call(subsystem, name)
            say({"partial": "call", "subsystem": subsystem, "name": name})

        def add_node(self, name: str, info: dict) -> None:
            super().add_node(name, info)
            say({"partial": "node", "name": name, "info": info})

    return StreamingRecord()


def run_experiment(repro: LoadedRepro, experiment) -> dict:
    """One compile under `experiment`, judged by the repro's oracle; what was applied is streamed."""
    from compiler.subsystems import Unavailable, applied

    record = streaming_record() if experiment.record else None
    m = repro.module
    start = time.perf_counter()
    try:
        with applied(experiment, record) as config:
            outcome = repro.oracle.run_check(m.Repro, m.make_inputs, m.COMPILE, m.CONTEXT, m.CHECK,
                                             device=experiment.device, config=config)
    except Unavailable as exc:
        return {"status": "unavailable", "message": str(exc)}
    except Exception as exc:  # the check catches compiler failures: this is the setup failing
        return {"status": "error", "message": f"{type(exc).__name__}: {exc}"[:500]}
    answer = {k: getattr(outcome, k) for k in ("status", "kind", "signature", "message")}
    answer["seconds"] = round(time.perf_counter() - start, 2)
    return answer


def hello(repro: LoadedRepro) -> dict:
    """First answer: what the parent needs to plan experiments (defaults, available flips)."""
    from compiler.subsystems import known_flips

    device = repro.module.CONTEXT.get("device", "cpu")
    return {"ready": True, "device": device, "flips": known_flips(device),
            "script_defaults": {k: repro.defaults.get(k) for k in repro.manifest.get("config") or {}}}


def main(argv: list[str]) -> int:
    """`REPRO_DIR`, or `--ready DEVICE`: warm up for DEVICE first, then read REPRO_DIR from stdin
    (minifier/blame/ready.py starts these before the repro exists)."""
    from compiler.subsystems import Experiment

    if argv[0] == "--ready":
        from compiler.first_compile import first_compile
        from compiler.subsystems import SCALAR_CPP

        os.nice(10)  # warming up beside the capture of the user's script, which comes first
        with contextlib.suppress(Exception):  # a failed warm-up must not pass for a probe's crash
            # Ready CPU probes are kept on GPU machines alone, for a GPU repro's code-path probe: scalar
            # C++, whose first compile in an Inductor cache builds the header it reuses (4.8 s of g++).
            first_compile(argv[1], SCALAR_CPP if argv[1] == "cpu" else None)
        argv = [sys.stdin.readline().strip()]
        if not argv[0]:
            return 0
    from compiler import gpu_gate

    with gpu_gate.starting_cuda():  # its CUDA context made now, before its hello: never beside an assert
        repro = load_repro(Path(argv[0]))
        device = str(repro.module.CONTEXT.get("device", "cpu"))
        if device.startswith("cuda"):
            import torch

            torch.ones(1, device=device).add_(1)
    say(hello(repro))
    for line in sys.stdin:
        if line.strip():
            say(run_experiment(repro, Experiment.from_dict(json.loads(line))))
    return 0


def say(answer: dict) -> None:
    sys.stdout.write(MARK + json.dumps(answer, default=str) + "\n")
    sys.stdout.flush()


def start_process(args: list[str], log) -> subprocess.Popen:
    """A fresh `python -m minifier.blame.probe_worker ARGS`, its stderr to `log`. Its cwd is the
    project root: from a repro folder, its repro.py would shadow the `repro` package."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return subprocess.Popen([sys.executable, "-m", "minifier.blame.probe_worker", *args], cwd=ROOT, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True)


class WorkerDied(Exception):
    """The child ended or went silent; carries the outcome that stands for it."""

    def __init__(self, answer: dict):
        super().__init__(answer.get("message", ""))
        self.answer = answer


class Child:
    """One `python -m minifier.blame.probe_worker` process and a thread reading its answers."""

    def __init__(self, folder: Path, log, zygote=None, ready=None):
        """A warm process waiting for its folder (`ready`, minifier/blame/ready.py), forked from
        `zygote` (minifier.workers.zygote) when given, else a fresh `python -m`."""
        from compiler.gpu_slots import SLOTS
        from minifier.workers.zygote import fork_module

        # cwd is the project root: from the repro folder, its repro.py would shadow the `repro` package
        log.flush()
        self.slot = ready.slot if ready is not None else SLOTS.take()  # its place under the GPU's cap
        self.proc = ready.proc if ready is not None else \
            fork_module(zygote, "minifier.blame.probe_worker", ROOT, log, [str(folder)], text=True)
        if ready is not None:
            with contextlib.suppress(BrokenPipeError, OSError):  # one that died answers as a crash
                self.proc.stdin.write(f"{folder.resolve()}\n")
                self.proc.stdin.flush()
        elif self.proc is None:
            self.proc = start_process([str(folder)], log)
        if ready is None:
            self.slot.bind(self.proc)
        self.answers: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            if line.startswith(MARK):
                self.answers.put(json.loads(line[len(MARK):]))
        self.answers.put(None)  # end of output: the child is gone

    def ask(self, request: dict | None, timeout: float, stage: str) -> dict:
        """Send one request and wait for its answer, gathering the record streamed before it."""
        from compiler.signature import crash_signature, hang_signature

        if request is not None:
            try:
                self.proc.stdin.write(json.dumps(request) + "\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError):
                pass  # the answer queue tells what happened
        record = {"calls": {}, "nodes": {}}
        deadline = time.monotonic() + timeout
        while True:
            try:
                answer = self.answers.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.close(now=True)
                kind, signature, message = hang_signature(timeout, stage)
                raise WorkerDied({"status": "fail", "kind": kind, "signature": signature, "message": message,
                                  **record})
            if answer is None:
                kind, signature, message = crash_signature(self.proc.wait(), stage)
                raise WorkerDied({"status": "fail", "kind": kind, "signature": signature, "message": message,
                                  **record})
            if answer.get("partial") == "call":
                record["calls"].setdefault(answer["subsystem"], []).append(answer["name"])
            elif answer.get("partial") == "node":
                record["nodes"][answer["name"]] = answer["info"]
            else:
                return {**answer, **record}

    def close(self, now: bool = False) -> None:
        """End it (SIGTERM, then SIGKILL); its end is waited for on a thread (after a device
        assert it takes a while), or with `now` here (under the GPU gate: compiler/gpu_gate.py)."""
        from minifier.workers.reap import end_now, kill_soon

        if now:
            end_now(self.proc)
        else:
            kill_soon(self.proc)


class BlameWorker:
    """Runs experiments on one repro folder in a warm child, or a fresh child each (`isolate`)."""

    def __init__(self, folder: Path, stage: str, isolate: bool = False, timeout: float = 300.0, zygote=None,
                 ready=None):
        """`ready`: a function giving a warm child waiting for its folder (ReadyProbes.take), or None."""
        self.folder, self.stage, self.isolate, self.timeout = folder, stage, isolate, timeout
        self.zygote, self.ready = zygote, ready
        self.log = tempfile.TemporaryFile(mode="w+")
        self.child: Child | None = None
        self.info: dict = {}
        self.restarts = 0
        self.closed = False
        self.lock = threading.Lock()

    def start(self) -> dict:
        """Start a child and return its hello (raises WorkerDied if it cannot load the repro).
        A child that comes up after `close` (another thread closed a starting worker) is killed."""
        ready = self.ready() if self.ready is not None else None
        if ready is not None:  # its stderr is the log from now on
            self.log.close()
            self.log = ready.log
        child = Child(self.folder, self.log, self.zygote, ready)
        with self.lock:
            if self.closed:
                child.close()
                raise RuntimeError("blame worker closed while its child started")
            self.child = child
        self.info = child.ask(None, STARTUP_TIMEOUT, self.stage)
        return self.info

    def run(self, experiment) -> dict:
        """One experiment's answer. Isolated on a GPU (a device-assert repro's), it runs alone on
        the GPU, from its ask until its process is gone (compiler/gpu_gate.py); the child's
        CUDA start, before its hello, is not under that hold."""
        from compiler import gpu_gate

        if self.child is None:
            self.start()
        alone = self.isolate and gpu_gate.enabled()
        with gpu_gate.exclusive() if alone else contextlib.nullcontext():
            try:
                return self.child.ask(experiment.to_dict(), self.timeout, self.stage)
            except WorkerDied as died:
                self.child, self.restarts = None, self.restarts + 1
                return died.answer
            finally:
                if self.isolate and self.child is not None:
                    self.child.close(now=alone)
                    self.child = None

    def log_tail(self, chars: int = 2000) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-chars:]

    def close(self) -> None:
        with self.lock:
            self.closed = True
            child, self.child = self.child, None
        if child is not None:
            child.close()
        self.log.close()

    def __enter__(self) -> "BlameWorker":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


if __name__ == "__main__":
    from compiler.quick_exit import quick_exit

    quick_exit(main(sys.argv[1:]))
