"""Asking the workers: a candidate graph becomes a Job, the Job an Answer.

A question about a graph becomes module source plus references to recorded inputs, a warm
worker checks it with the one oracle, and its answer comes back as the worker's wire dict
(minifier.workers.answer reads it). Answers are cached by the question's key
(minifier.workers.job), so nothing is compiled twice; questions may be sent ahead (prefetch);
compiles, cache hits and the slowest answer are counted for every question about one graph.
Whether an answer is the failure being minified is the Judge's business (minifier.workers.judge).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple

import torch.fx as fx

from compiler.graph_code import module_source
from compiler.judging import Judging
from compiler.stages import CompileSetup
from minifier.graph.edit import input_ref, placeholders
from minifier.workers.answer import Answer
from minifier.workers.job import Job
from minifier.workers.pool import WorkerPool

MIN_ADAPTIVE_TIMEOUT = 60.0


def stuck_after(seconds: float) -> float:
    """The time after which a run is stuck, for a graph whose runs took `seconds`: ten times as
    long (at least a minute). A C++ `throw` inside an OpenMP loop can deadlock ("terminate called
    recursively") instead of aborting; without a limit each such candidate would hold a worker
    for the pool's full timeout."""
    return max(MIN_ADAPTIVE_TIMEOUT, 10 * seconds)


def first_check_limit(limit: float, script_seconds: float, script_limit: float) -> float:
    """The pool's limit once the script has run: a graph's first check has no run of its own
    to time yet, and may take as long as several of the script's runs (a big model's eager,
    fp64 and compiled runs, each judged), so a fixed `limit` (what a candidate gets) would call
    a model under memory pressure a hang. `stuck_after` the script's run, never past the
    script's own limit (a hanging script ran until that)."""
    return max(limit, min(stuck_after(script_seconds), script_limit))


class Question(NamedTuple):
    """One question about a graph: does `gm` fail at `stage` (None: the evaluator's)? `repeat` > 0
    asks it again instead of answering from the cache (flakiness); `how` sets other fields of
    its Job (op, runs, node_names, kernel_threads, ...: minifier.workers.job)."""
    gm: fx.GraphModule
    stage: str | None = None
    repeat: int = 0
    how: dict | None = None


def as_question(question: Question | tuple) -> Question:
    """A Question, from one or from its fields in order."""
    return question if isinstance(question, Question) else Question(*question)


@dataclass
class Counters:
    """What every evaluator of one graph adds to, however many questions it is asked: they are
    summed into report.json (compiles, cache hits, candidates rejected uncompiled) and the
    candidate log, and the slowest answer sets the adaptive timeout."""

    compiles: int = 0
    cache_hits: int = 0
    rejected: int = 0  # candidates `validate` answered invalid: never sent to a worker, never compiled
    slowest: float = 0.0  # seconds of the slowest answer that was not a hang
    log: list = field(default_factory=list)


@dataclass(frozen=True)
class Asker:
    """Sends questions about candidate graphs to the pool and gets their answers back: each
    question once (the answer cache), several at a time (prefetch), counting compiles and
    timing answers. `stage` and `judging` are part of every question asked (the Job and its
    cache key), so they live here, not with the Judge that reads the answers.
    An Asker made with `replace` shares this one's pool, cache, in-flight jobs and counters."""

    pool: WorkerPool
    case_dir: Path
    setup: CompileSetup  # how the graph is compiled and run: spec, planted bugs, modes
    stage: str = "inductor"  # where a question that names no stage is asked
    judging: Judging = Judging()  # how the worker judges outputs: the run's tolerances, strict, rungs not checked
    timeout: float | None = None  # per candidate; a candidate running longer is a hang
    validate: Callable[[fx.GraphModule], str | None] | None = None  # why a candidate cannot run, checked
    counters: Counters = field(default_factory=Counters)
    cache: dict = field(default_factory=dict)
    inflight: dict = field(default_factory=dict)  # key -> Future of a job sent ahead (prefetch)

    @property
    def compiles(self) -> int:
        return self.counters.compiles

    @property
    def cache_hits(self) -> int:
        return self.counters.cache_hits

    @property
    def rejected(self) -> int:
        return self.counters.rejected

    @property
    def slowest(self) -> float:
        return self.counters.slowest

    @property
    def log(self) -> list:
        return self.counters.log

    def job(self, gm: fx.GraphModule, stage: str | None = None, repeat: int = 0, **how) -> Job:
        """The job asking about `gm` at `stage` (this evaluator's by default); `how` sets the
        other fields of the Job (op, runs, node_names, kernel_threads)."""
        # A run longer than a check's limit is a hang; a divergence or kernels job is several
        # compiles and runs of the whole graph, and gets the pool's limit instead.
        check = how.get("op", "check") == "check"
        limit = (self.timeout or self.adaptive_timeout()) if check and (self.timeout or self.slowest) else None
        return Job(source=module_source(gm), inputs=tuple(input_ref(p) for p in placeholders(gm)),
                   case_dir=str(self.case_dir), spec=self.setup.spec.to_dict(), stage=stage or self.stage,
                   injections=self.setup.injections, judging=self.judging, context=self.setup.context, repeat=repeat,
                   calls_before=self.setup.calls_before, **{"timeout": limit, **how})

    def adaptive_timeout(self) -> float:
        """Candidates are smaller than the graph first checked, so one that runs much longer than
        the slowest answer so far is stuck (`stuck_after`)."""
        return min(self.pool.timeout, stuck_after(self.slowest))

    def outcomes(self, gms: list[fx.GraphModule], stage: str | None = None, repeat: int = 0) -> list[dict]:
        """Check candidates on as many workers as there are, answers in the given order.
        `repeat` > 0 asks again instead of answering from the cache (flakiness checks)."""
        return self._answers([Question(gm, stage, repeat) for gm in gms])

    def outcomes_at(self, gm: fx.GraphModule, stages: list[str]) -> list[dict]:
        """One graph through several stages at once (the stage search), answers in order."""
        return self._answers([Question(gm, stage) for stage in stages])

    def repeats(self, gm: fx.GraphModule, times: int, judged: int | None = None,
                until_pass: bool = False) -> list[dict]:
        """`times` runs of one graph, for the k-of-k flakiness rule: compiled once and run
        `times` times (with the whole-graph caches off, a second compile would generate the
        same code and load the same kernels). A run that kills its worker (crash, hang) ends
        that job, and so does a run that kills the CUDA context (a device-side assert: every
        later run in that process would fail differently); each further try is then a job of
        its own, in a worker that never saw the failure. `judged`: only the first outputs decide
        each verdict (Job.judged_outputs); `until_pass`: no run after one that passes (Job.until_pass)."""
        how = {"judged_outputs": judged} if judged else {}
        answer = self._answers([repeats_question(gm, times, judged=judged, until_pass=until_pass)])[0]
        runs = [{**answer, **run} for run in Answer.from_wire(answer).runs]
        if until_pass and Answer.from_wire(runs[-1]).status == "pass":
            return runs
        return runs + self._answers(tries_questions(gm, len(runs), times, how))

    def divergence(self, gm: fx.GraphModule) -> dict:
        """Where an accuracy failure starts in `gm` at Inductor (minifier.workers.divergence_worker)."""
        return self._answers([divergence_question(gm)])[0]

    def kernels(self, gm: fx.GraphModule) -> dict:
        """Inductor's code and kernels for `gm`: the answer of its divergence job where that ran,
        else a kernels job's (code generated, nothing built or run), sent ahead by `kernels_ahead`
        when it was."""
        divergence = self._divergence_kernels(gm)
        return divergence if divergence is not None else self._answers([kernels_question(gm)])[0]

    def kernels_ahead(self, gms: list[fx.GraphModule | None]) -> None:
        """Send the kernels jobs `kernels` will need for `gms` now (None entries are skipped)."""
        self.prefetch([kernels_question(g) for g in gms if g is not None and self._divergence_kernels(g) is None])

    def _divergence_kernels(self, gm: fx.GraphModule) -> dict | None:
        """The answer of `gm`'s divergence job if it ran and generated its kernels, else None."""
        divergence = self.cached(divergence_question(gm)) or {}
        return divergence if "kernels" in divergence else None

    def cached(self, question: Question) -> dict | None:
        """The answer to `question` if it was already asked, else None:
        for work that can reuse another question's answer (localization reads the kernels a
        divergence job generated) but should not ask it anew."""
        (_, job), = self._jobs([question])
        return self.cache.get(job.key())

    def outcomes_of(self, questions: list[Question]) -> list[dict]:
        """Answers to `questions`, in order: from the cache, from the
        jobs sent ahead for them, or asked now."""
        return self._answers(questions)

    def asked(self, question: Question) -> bool:
        """Whether the question was asked already (answered, or sent ahead and on its way)."""
        (_, job), = self._jobs([question])
        return job.key() in self.cache or job.key() in self.inflight

    def answer_as(self, question: Question, answer: dict) -> None:
        """Take `answer` as the answer to `question` without asking it: another question's
        answer already says it (a check judged on a graph's own outputs, asked of that graph
        with values it stores anyway as further outputs)."""
        (_, job), = self._jobs([question])
        self.cache.setdefault(job.key(), answer)

    def prefetch(self, questions: list[Question]) -> None:
        """Send `questions` to the workers now, ahead of being asked: a
        later `outcomes`, `outcomes_at` or `repeats` with the same question takes its answer.
        This is how checks whose need is likely but not yet certain overlap with the ones
        being waited on; `abandon` forgets those never asked. A question's `how` may say how (not
        what) to check: {"kernel_threads": 2} for one long compile that would otherwise leave a
        core idle."""
        self._submit(self._jobs(questions))

    def abandon(self) -> None:
        """Drop prefetched questions nobody asked: cancel those not started, and count the
        compiles of those that ran (their answers still fill the cache)."""
        for key, future in list(self.inflight.items()):
            if future.cancel():
                self.inflight.pop(key, None)
            else:
                self._record_when_done(key)

    def _record_when_done(self, key: str) -> None:
        """Record the answer of a job nobody waits for once it comes (unless someone took it first)."""
        future = self.inflight.get(key)
        if future is not None:
            future.add_done_callback(lambda f, key=key: self._record(key, f.result())
                                     if self.inflight.pop(key, None) is not None else None)

    def _jobs(self, questions: list[Question]) -> list[tuple[fx.GraphModule, Job]]:
        """Each question as its graph and its one Job."""
        asked = [as_question(q) for q in questions]
        return [(q.gm, self.job(q.gm, q.stage, q.repeat, **(q.how or {}))) for q in asked]

    def _submit(self, asked: list[tuple[fx.GraphModule, Job]]) -> list[str]:
        keys = []
        for gm, job in asked:
            key = job.key()
            keys.append(key)
            if key in self.cache or key in self.inflight:
                continue
            why = self.validate(gm) if self.validate is not None else None
            if why:
                self.counters.rejected += 1
                self.cache[key] = Answer("invalid", "invalid_graph", message=why).to_wire()
            else:
                self.inflight[key] = self.pool.submit(job.to_dict())
        return keys

    def _answers(self, questions: list[Question]) -> list[dict]:
        asked = self._jobs(questions)
        hits = sum(1 for _, job in asked if job.key() in self.cache)
        keys = self._submit(asked)
        self.counters.cache_hits += hits
        for key in dict.fromkeys(keys):
            future = self.inflight.get(key)
            if future is not None:
                answer = future.result()
                if self.inflight.pop(key, None) is not None:
                    self._record(key, answer)
        return [self.cache[key] for key in keys]

    def _record(self, key: str, wire: dict) -> None:
        counters, answer = self.counters, Answer.from_wire(wire)
        counters.compiles += answer.compiles_spent
        self.cache[key] = wire
        if not answer.hung and answer.compiles != 0:  # a kernels job sets no time limit
            counters.slowest = max(counters.slowest, answer.duration)
        counters.log.append({"key": key, "status": answer.status, "kind": answer.kind,
                             "seconds": round(answer.seconds or 0.0, 3)})

def repeats_question(gm: fx.GraphModule, times: int, kernel_map: bool = False, judged: int | None = None,
                     until_pass: bool = False, share_compile: bool = False) -> Question:
    """The question `Asker.repeats` asks first, for `prefetch`; `kernel_map`: the answer
    also holds the kernels built (for a divergence job on the same graph, see below);
    `judged`: only the first outputs decide the verdict (Job.judged_outputs); `until_pass`:
    no run after one that passes (Job.until_pass); `share_compile`: its compile is kept for
    the tries asked as jobs of their own (Job.share_compile; the same key either way)."""
    return Question(gm, None, 0, {"runs": times, **({"kernel_map": True} if kernel_map else {}),
                                  **({"judged_outputs": judged} if judged else {}),
                                  **({"until_pass": True} if until_pass else {}),
                                  **({"share_compile": True} if share_compile else {})})


def tries_questions(gm: fx.GraphModule, first: int, times: int, how: dict | None = None) -> list[Question]:
    """The tries `Asker.repeats` asks as jobs of their own, each in a process that never saw
    the failure, after a first job that ran `first` of `times` runs (`how`: as `repeats` says)."""
    return [Question(gm, None, r, how or {}) for r in range(first, times)]


def kernels_question(gm: fx.GraphModule) -> Question:
    """The kernels job `Asker.kernels` asks where no divergence job generated them."""
    return Question(gm, "inductor", 0, {"op": "kernels"})


def divergence_question(gm: fx.GraphModule, known_kernels: list | None = None,
                        known_metrics: dict | None = None) -> Question:
    """The question `Asker.divergence` asks, for `prefetch`: its kernels that are new
    build on two threads (one long job that would otherwise leave a core idle). With the
    kernels an earlier check of `gm` recorded, it does not generate them again; with the
    metrics that check gave its outputs, it judges none of them again."""
    names = [n.name for n in gm.graph.nodes if n.op not in ("placeholder", "output")]
    return Question(gm, "inductor", 0, {"op": "divergence", "node_names": names, "kernel_threads": 2,
                                        **({"known_kernels": known_kernels} if known_kernels else {}),
                                        **({"known_metrics": known_metrics} if known_metrics else {})})

