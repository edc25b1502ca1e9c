"""A pool of warm worker processes; a worker that dies or hangs is recorded and replaced.

Each worker imports torch once and checks many candidates (see minifier/workers/worker.py). A crash
in compiled code (SIGSEGV, SIGABRT) kills only the worker: the job's answer becomes a
`crash` failure carrying the signal, and a fresh worker takes its place.
"""
from __future__ import annotations

import contextlib
import queue
import select
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from compiler.crash_trace import crashed_kernel, log_size, logged_since, marks_path, running_kernel
from compiler.signature import crash_signature, hang_signature
from minifier.workers.interpreters import WarmInterpreters
from minifier.workers.protocol import Closed, read_message, write_message
from compiler import gpu_gate
from compiler.gpu_slots import Slot
from minifier.workers.reap import end_now, kill_soon
from minifier.workers.stop import STOP, Cancelled

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def _answer(stream) -> dict | None:
    """A worker's next answer; None if its stdout ended before or inside one (it died)."""
    try:
        return read_message(stream)
    except Closed:
        return None


class Worker:
    def __init__(self, log_path: Path, interpreters: WarmInterpreters, slot: Slot | None = None,
                 fork: bool = True):
        """Its process from the run's warm interpreters (forked from the zygote where one forks and
        `fork`, else a fresh `python -m`). `slot`: its place under the GPU's cap, taken there if none."""
        self.slot = slot or interpreters.slot()
        self.log = open(log_path, "ab")
        self.proc = interpreters.worker(log_path, self.log, fork)
        self.jobs = 0
        self.logged = 0  # the log's length when the job now running was sent
        self.warming = False  # a warmup job was sent whose answer is not read yet
        self.born, self.name = time.time(), log_path.stem
        self.marks = marks_path(log_path.parent, self.proc.pid)  # the C++ kernel it runs now (crash_trace)
        self.warm_answer: dict | None = None  # the warmup's answer, once read
        self.killed = False
        self.warm_failed = False  # it died or hung warming up
        self.slot.bind(self.proc, self._evict if self.slot.optional else None)

    @classmethod
    def spare(cls, log_path: Path, interpreters: WarmInterpreters) -> "Worker | None":
        """A worker kept warm in case one dies, where the GPU's cap leaves room (else None)."""
        slot = interpreters.slot(optional=True)
        return None if slot is None else cls(log_path, interpreters, slot).warm()

    def _evict(self) -> None:
        """Give its slot to a process that is needed (it was only a spare)."""
        self.killed = True
        end_now(self.proc)

    def warm(self) -> "Worker":
        """Start warming up now, without waiting: a spare is ready by the time it is needed."""
        try:
            write_message(self.proc.stdin, {"op": "warmup"})
            self.warming = True
        except (BrokenPipeError, OSError):
            pass
        return self

    def warmed(self, timeout: float = 120.0) -> dict | None:
        """The answer to the warmup `warm` sent (waiting for it); None, the worker killed, if it
        died or hung warming up."""
        self.warming = False
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        answer = self.warm_answer = _answer(self.proc.stdout) if ready else None
        if answer is None:
            self.warm_failed = True
            self.kill()
        return answer

    def warmup_row(self, born: float) -> dict | None:
        """The timeline row of this worker's start (`born`: the pool's time.time() at its birth):
        from its process's start to ready, where it said when. It has a job row's fields (no
        stage, no graph), so that what reads the timeline reads it as one."""
        answer = self.warm_answer or {}
        if answer.get("ready_at") is None:
            return None
        since = round(self.born - born, 2)
        return {"op": "warmup", "stage": None, "runs": 0, "source_lines": 0, "queued": since, "start": since,
                "seconds": round(answer["ready_at"] - self.born, 2), "status": answer.get("status"), "kind": None,
                "worker": self.name, **({"peak_mib": answer["peak_mib"]} if answer.get("peak_mib") else {})}

    def ask(self, job: dict, timeout: float) -> dict:
        """Send one job and wait for its answer; a dead or silent worker answers crash/hang."""
        stage = job.get("stage", "inductor")
        if (self.warming and self.warmed() is None) or self.warm_failed:  # never blame the candidate for a worker that could not start
            return {"status": "invalid", "kind": "worker_error", "seconds": 0.0,
                    "message": "a spare worker died or hung while warming up; see its log"}
        self.logged = log_size(self.log.name)  # what it logs from here on is this job's
        try:
            write_message(self.proc.stdin, job)
        except (BrokenPipeError, OSError):
            return self._died(stage)
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            kernel = running_kernel(self.marks)  # read before the kill: the C++ kernel it is stuck in
            self.kill()
            kind, sig, msg = hang_signature(timeout, stage)
            return {"status": "fail", "kind": kind, "signature": sig, "message": msg, "seconds": timeout,
                    **({"died_in_kernel": kernel} if kernel else {})}
        answer = _answer(self.proc.stdout)
        if answer is None:
            return self._died(stage)
        self.jobs += 1
        return answer

    def _died(self, stage: str) -> dict:
        """A crash's answer, with the kernel it died in where its marks file or stacks name one."""
        code = self.proc.wait()
        kind, sig, msg = crash_signature(code, stage)
        kernel = running_kernel(self.marks) or crashed_kernel(logged_since(self.log.name, self.logged))
        return {"status": "fail", "kind": kind, "signature": sig, "message": msg, "seconds": 0.0,
                **({"died_in_kernel": kernel} if kernel else {})}

    @property
    def alive(self) -> bool:
        return not self.killed and self.proc.poll() is None

    def kill(self) -> None:
        """End it now; its end is waited for on a thread (a CUDA worker's teardown takes a while)."""
        self.killed = True
        kill_soon(self.proc)

    def end(self, now: bool = False) -> None:
        """End it if it still runs, and close our end of its log: its end is reaped on a thread,
        or with `now` here (after a device assert, under the GPU gate: given a moment to exit
        by itself, as a retired worker does, then SIGTERM, then SIGKILL)."""
        if now:
            self.killed = True
            end_now(self.proc, first_wait=2.0)
        elif not self.killed:
            self.kill()
        self.log.close()
        with contextlib.suppress(OSError):
            self.marks.unlink()


def answer_retires(answer) -> bool:
    return isinstance(answer, dict) and bool(answer.get("retire"))


def _timeline_row(job: dict, answer: dict, queued: float, start: float) -> dict:
    """One job in the pool's timeline (work/timeline.json): which question, how long it
    waited for a worker and how long it ran, so that the slow phases of a run are visible."""
    lines = job.get("source", "").count("\n")
    return {"op": job.get("op", "check"), "stage": job.get("stage"), "runs": job.get("runs", 1),
            "source_lines": lines, "queued": round(queued, 2), "start": round(start, 2),
            "seconds": round(answer.get("wall", 0.0), 2), "status": answer.get("status"), "kind": answer.get("kind"),
            **({"compiles": answer["compiles"]} if "compiles" in answer else {}),
            **({"peak_mib": answer["peak_mib"]} if answer.get("peak_mib") else {}),
            **({"judged_outputs": job["judged_outputs"]} if job.get("judged_outputs") else {}),
            **({"compile_loaded": True} if answer.get("compile_loaded") else {})}  # compiler/shared_compile.py


class WorkerPool:
    """`size` warm workers; `submit` runs a job on the next free one.

    Workers come from the run's warm interpreters (minifier/workers/interpreters.py), the supply
    that runs repro.py too: `interpreters` if given (the caller closes it), else the pool's own."""

    def __init__(self, size: int, log_dir: Path, timeout: float = 600.0,
                 interpreters: WarmInterpreters | None = None, prestarted: list[Worker] | None = None):
        """`prestarted`: workers started (and told to warm up) before this process imported torch."""
        self.size = max(1, size)
        self.prestarted = list(prestarted or [])
        self.log_dir = log_dir
        self.timeout = timeout
        self.idle: queue.Queue[Worker] = queue.Queue()
        self.restarts = 0  # workers that died, hung or were spoiled, replaced
        self.replaced = 0  # those and the ones a job asked to end
        self.born = time.perf_counter()
        self.born_wall = time.time()  # what workers' warmup rows are measured from
        self.timeline: list[dict] = []  # per job: what, when asked, when started, how long (seconds since birth)
        self.lock = threading.Lock()
        self.spares: list[Worker] = []  # warming, once a worker has died
        self.starting: list[Worker] = []  # first starts still warming up (close kills them)
        self.closing = False
        self.cancelled = False  # the run stopped: no answer from now on is an answer (see cancel)
        self.busy: set[Worker] = set()  # workers with a job
        self.executor = ThreadPoolExecutor(self.size)
        log_dir.mkdir(parents=True, exist_ok=True)
        self.own_interpreters = interpreters is None
        self.interpreters = WarmInterpreters.own(log_dir) if interpreters is None else interpreters
        # Started and warmed on the pool's threads: a zygote takes seconds to be ready to fork.
        self.warmups = [self.executor.submit(self._first_start, i) for i in range(self.size)]
        self.stop_key = STOP.on_stop(self.cancel)

    def _start(self, i) -> Worker:
        return Worker(self.log_dir / f"worker-{i}.log", self.interpreters)

    def _first_start(self, i) -> dict | None:
        worker = self.prestarted[i] if i < len(self.prestarted) else self._start(i)
        if not self._track(worker, True):
            return None
        answer = (worker if worker.warming else worker.warm()).warmed(self.timeout)  # None: killed, dead or silent
        if not self._track(worker, False):
            return None
        self._note_warmup(worker)
        if not worker.alive:  # never let a candidate find a worker that died warming up
            worker.end()
            worker = Worker(self.log_dir / f"worker-{i}-cold.log", self.interpreters, fork=False)
        self._put_idle(worker)
        return answer

    def _track(self, worker: Worker, starting: bool) -> bool:
        """Note a first start beginning or ending its warm-up; False (the worker ended) once the
        pool is closing: a run that ends early (Ctrl-C, an error) waits for no warm-up."""
        with self.lock:
            closing = self.closing
            if starting and not closing:
                self.starting.append(worker)
            elif worker in self.starting:
                self.starting.remove(worker)
        if closing:
            worker.end()
        return not closing

    def submit(self, job: dict, alone: bool = False) -> Future:
        """Run `job` on the next free worker. `alone`: on a GPU it runs with the gate held
        exclusively until its worker is reaped, if that ends (a blame experiment of a crash, a hang
        or a device assert: compiler/gpu_gate.py), as every job does once the run has asserted."""
        return self.executor.submit(self._run, job, time.perf_counter(), alone)

    def run(self, job: dict, alone: bool = False) -> dict:
        return self.submit(job, alone).result()

    def _run(self, job: dict, queued: float, alone: bool = False) -> dict:
        worker = self._take_idle()
        start = time.perf_counter()
        answer, asked = None, worker
        fresh = worker.warming
        if fresh:  # its CUDA start (the gate shared) before this job may take the gate
            worker.warmed()
        try:
            self._cancel_check(worker)
            with contextlib.ExitStack() as gate:
                exclusive = gpu_gate.asserting() or (alone and gpu_gate.enabled())  # one GPU job at a time
                if exclusive:
                    gate.enter_context(gpu_gate.exclusive())
                if gpu_gate.asserting():  # a check names the kernel that asserts (compiler/device_asserts.py)
                    job = {**job, "kernel_waits": True}
                try:
                    answer = worker.ask(job, job.get("timeout", self.timeout))
                    if fresh:
                        self._note_warmup(worker)
                finally:
                    with self.lock:
                        self.busy.discard(worker)
                    # a retired one's CUDA context is spoiled; after a cancel, the stop killed it
                    if not self.cancelled and (answer_retires(answer) or not worker.alive):
                        self._end_spoiled(worker, answer, gate, exclusive)
            if worker.killed and not self.cancelled:  # one the job asked to end is no restart
                worker = self._replacement(counted=not (answer or {}).get("asked_retire"))
        finally:
            self._put_idle(worker)  # after a cancel, the killed one: the next job is cancelled at once
        self._cancel_check()  # its worker was killed by the stop: a crash of SIGKILL is no answer
        answer.setdefault("wall", time.perf_counter() - start)
        row = _timeline_row(job, answer, queued - self.born, start - self.born)
        # Which worker, and how long of the job's time it spent still warming up (a spare taken early)
        ready_at = (asked.warm_answer or {}).get("ready_at") if fresh else None
        row.update(worker=asked.name, **({"warm_wait": round(max(0.0, ready_at - self.born_wall - row["start"]), 2)}
                                         if ready_at else {}))
        self.timeline.append(row)
        return answer

    def _cancel_check(self, worker: Worker | None = None) -> None:
        """Raise Cancelled once the run has stopped; else note `worker` busy (cancel kills it)."""
        with self.lock:
            if not self.cancelled and worker is not None:
                self.busy.add(worker)
        if self.cancelled:
            raise Cancelled(STOP.reason or "cancelled")

    def cancel(self) -> None:
        """The run stopped: every answer from now on raises Cancelled (the flag is set before any
        worker is killed, so a job whose worker dies of it never answers `crash`), and every worker
        is ended now (SIGTERM, then SIGKILL on a reaper thread), waiting for none. Runs on the
        thread that saw the signal: no waiting."""
        self.cancelled = True
        for worker in list(self.busy) + list(self.idle.queue) + list(self.spares) + list(self.starting):
            kill_soon(worker.proc)
        if self.own_interpreters:
            self.interpreters.kill_group()

    def _take_idle(self) -> Worker:
        """The next idle worker; on a GPU one whose slot went to a needed process (blame's, a
        verification's) while it was idle is started again."""
        worker = self.idle.get()
        if worker.slot.promote() and (worker.alive or worker.warming):
            return worker
        worker.end()
        return self._replacement()

    def _put_idle(self, worker: Worker) -> None:
        """Back in the queue: on a GPU its slot may be given to a needed process meanwhile."""
        if self.interpreters.slots.on and worker.alive and not worker.warming:
            worker.slot.demote(worker._evict)
        self.idle.put(worker)

    @staticmethod
    def _end_spoiled(worker: Worker, answer: dict | None, gate: contextlib.ExitStack, exclusive: bool) -> None:
        """End a worker that retired or died; on a GPU, under the gate until it is reaped, and a
        device assert turns the run's GPU jobs exclusive from now on."""
        worker.killed = True
        if not gpu_gate.enabled():
            worker.end()
            return
        if gpu_gate.poisons(f"{(answer or {}).get('signature', '')} {(answer or {}).get('message', '')}"):
            gpu_gate.mark_asserting()
        if not exclusive:
            gate.enter_context(gpu_gate.exclusive())
        worker.end(now=True)

    def keep_spares(self) -> None:
        """Start the spares now: the capture saw a failure that ends its process, so the first
        checks will end workers (their confirmation tries, all at once), and a spare warming
        since the capture ended is ready sooner (even a forked worker takes seconds to start)."""
        with self.lock:
            self._top_up("early-spare")

    def _note_warmup(self, worker: Worker) -> None:
        row = worker.warmup_row(self.born_wall)
        if row is not None:
            self.timeline.append(row)

    def _replacement(self, counted: bool = True) -> Worker:
        """A worker in place of one that died: a spare warmed since an earlier death, if any,
        with the spares topped up to one per worker. A candidate that crashes tends to have
        siblings that crash too, and each fresh worker costs seconds of `import torch` (and,
        on a GPU, of starting CUDA)."""
        with self.lock:
            self.restarts, self.replaced = self.restarts + counted, self.replaced + 1
            worker = None
            while self.spares and worker is None:
                worker = self.spares.pop(0)
                if not worker.slot.promote() or not worker.alive:  # gone, or its slot given to another
                    worker.end()
                    worker = None
            worker = worker or self._start(self.size + 2 * self.replaced).warm()  # warming now, not at its first job
            self._top_up(f"{self.replaced}-spare")
        return worker

    def _top_up(self, name: str) -> None:
        """Spares up to one per worker; on a GPU one at most, and only where the cap leaves room."""
        wanted = 1 if gpu_gate.enabled() else self.size
        while len(self.spares) < wanted and not self.closing:
            spare = Worker.spare(self.log_dir / f"worker-{name}{len(self.spares)}.log", self.interpreters)
            if spare is None:
                return
            self.spares.append(spare)

    def close(self) -> None:
        """Kill every worker at once and wait for none: they hold no state, and waiting for
        each in turn (or for their own exits, which tear torch and CUDA down) cost a second or
        more per run on the H100; their ends are reaped on threads (minifier.workers.reap).
        First starts still waiting for the zygote are not waited for either (each ends the
        worker it gets): a Ctrl-C during the capture waited for them past CI's 120 s on a busy
        machine."""
        STOP.forget(self.stop_key)
        with self.lock:
            self.closing = True
            warming = list(self.starting)
        for worker in warming:
            worker.kill()
        self.executor.shutdown(wait=all(future.done() for future in self.warmups), cancel_futures=True)
        workers = []
        while not self.idle.empty():
            workers.append(self.idle.get())
        workers += self.spares + self.prestarted[self.size:]
        self.spares = []
        for worker in workers:
            worker.end()
        if self.own_interpreters:
            self.interpreters.close()
