"""A fuzzing campaign: hypothesis draws small programs (minifier.fuzz.strategies), each is checked
in a warm worker process with the tool's one oracle (a crash or abort in compiled code kills only
the worker), and hypothesis shrinks the first failure it meets. That failure is recorded and
masked, and the campaign goes on from a new seed with the examples it has left, so every
distinct failure is shrunk once. What happens to the failures afterwards (a case script each,
minified by the pipeline) is minifier.fuzz.cases; the command line is minifier.fuzz.command.
"""
from __future__ import annotations

import hashlib
import itertools
import json
import unittest
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torch

from minifier.fuzz.drawn_program import Program
from minifier.fuzz.failures import Failure, Masks, classify, gradient_of
from minifier.reduce.delta_core import shortest_failing_prefix
from minifier.workers.answer import Answer
from minifier.workers.job import Job


@dataclass
class FuzzOptions:
    ops: list[str] | None = None
    dtypes: list[str] | None = None
    max_examples: int = 200
    max_time: float | None = None  # seconds of campaign (drawing, checking, shrinking; reduction comes after)
    seed: int = 0
    device: str = "cpu"
    injections: list[str] = field(default_factory=list)
    masks: list[str] = field(default_factory=list)
    out: Path = Path("minify-out/fuzz")
    max_steps: int = 4
    allow_nonfinite: bool = True  # NaN and +-Inf among the drawn values
    backward: float = 0.25  # share of drawn programs also checked through backward (their inputs' gradients)
    database: Path | None = None  # hypothesis's example database (a folder); None: no saving
    replay: bool = False  # only replay the failures saved in `database`
    shrink_compiles: int = 30  # new programs checked while shrinking one failure
    shrink_time: float = 120.0
    example_timeout: float = 120.0
    reduce: bool = True
    quiet: bool = False
    shard: object | None = None  # minifier.fuzz.shard.Shard: run only this share of the campaign's units
    unit_examples: int = 20  # programs per unit of a sharded campaign (minifier.fuzz.shard)
    known: list[Path] = field(default_factory=list)  # finding records whose findings are not new (records.py)
    known_issues: Path | None = None  # id -> issue URL: findings masked by name (minifier.fuzz.known_issues)



class TimeUp(BaseException):
    """Raised inside the hypothesis test once the campaign's time is spent. A BaseException,
    so hypothesis does not take it for a failure to shrink: it ends the round at once."""


class FuzzFailure(Exception):
    """Raised inside the hypothesis test so hypothesis shrinks the failing program."""

    def __init__(self, failure: Failure):
        super().__init__(f"{failure.key}: {failure.message}\n{failure.program!r}")
        self.failure = failure



def to_device(t: torch.Tensor, device: str) -> torch.Tensor:
    """`t` on `device` with the same sizes, strides and storage offset (`.to` would not keep
    an expanded or offset layout)."""
    if t.device.type == torch.device(device).type:
        return t
    elements = t.untyped_storage().nbytes() // t.element_size()
    flat = torch.as_strided(t, (elements,), (1,), 0).to(device)
    return flat.as_strided(t.shape, t.stride(), t.storage_offset())


def database_digest(opts: FuzzOptions) -> bytes:
    """Campaigns drawing from the same ops, dtypes, values and plants share database entries."""
    drawn = (sorted(opts.ops or []), sorted(opts.dtypes or []), opts.max_steps, opts.allow_nonfinite,
             sorted(opts.injections), opts.device) + ((opts.backward,) if opts.backward else ())
    return hashlib.sha256(repr(drawn).encode()).digest()


# --------------------------------------------------------------------------- checking

class Runner:
    """Checks programs in a warm worker process; answers are cached by program key."""

    def __init__(self, opts: FuzzOptions, work: Path):
        from compiler import settings
        from compiler.inject import parse_spec
        from minifier.workers.pool import WorkerPool

        self.opts = opts
        self.work = work
        self.injections = [parse_spec(s).to_dict() for s in opts.injections]
        settings.share_cores()  # the worker compiles beside this process's own eager runs
        settings.drop_overrides()  # the worker's caches as compiler.settings sets them
        self.pool = WorkerPool(1, work / "logs", timeout=opts.example_timeout)
        self.cache: dict[str, dict] = {}
        self.statuses: Counter = Counter()
        self.past = 0  # programs checked under earlier caches (new_cache)

    @property
    def compiles(self) -> int:
        return self.past + len(self.cache)

    def new_cache(self) -> None:
        """Forget the answers so far (a shard's unit must not depend on what came before it)."""
        self.past, self.cache = self.compiles, {}

    def outcome(self, program: Program) -> dict:
        key = program.key()
        if key not in self.cache:
            self.cache[key] = self._check(program, key)
            answer = Answer.from_wire(self.cache[key])
            self.statuses[answer.status] += 1
            if answer.kind == "numerics":  # passed, but differs as rounding does
                self.statuses["numerics"] += 1
        return self.cache[key]

    def _check(self, program: Program, key: str) -> dict:
        from compiler.stages import CompileSpec

        case = self.work / "examples" / key
        case.mkdir(parents=True, exist_ok=True)
        torch.save({n: to_device(t, self.opts.device) for n, t in program.inputs.items()}, case / "values.pt")
        flags = "# dynamic=True\n" * program.dynamic + "# checked through backward\n" * program.backward
        (case / "program.py").write_text(flags + program.function_source())
        spec = CompileSpec(dynamic=True if program.dynamic else None)
        job = Job(source=program.module_source(), inputs=tuple(program.inputs), case_dir=str(case),
                  spec=spec.to_dict(), stage="inductor", injections=tuple(self.injections), backward=program.backward)
        answer = self.pool.run(job.to_dict())
        verdict = {k: answer.get(k) for k in ("status", "kind", "signature", "rung", "message")}
        (case / "outcome.json").write_text(json.dumps(verdict, default=str))
        return answer

    def close(self) -> None:
        self.pool.close()


class Campaign:
    """Hypothesis rounds: each finds and shrinks one failure not yet masked, then masks it."""

    def __init__(self, opts: FuzzOptions, runner: Runner, masks: Masks, say):
        from minifier.fuzz.strategies import programs

        self.opts, self.runner, self.masks, self.say = opts, runner, masks, say
        self.strategy = programs(ops=opts.ops, dtypes=opts.dtypes, max_steps=opts.max_steps,
                                 allow_nonfinite=opts.allow_nonfinite, device_type=torch.device(opts.device).type,
                                 backward=opts.backward)
        self.deadline = time.monotonic() + opts.max_time if opts.max_time else None
        self.generated = 0  # examples drawn outside shrinking, over all rounds
        self.masked = 0
        self.failures: list[Failure] = []
        self.shrinking_since: tuple[float, int] | None = None  # (time, compiles) at this round's first failure
        self.stopped = "max-examples"

    def time_up(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def shrink_spent(self) -> bool:
        """The shrinking budget of one failure is spent, or the campaign's time is up: --max-time
        ends shrinking too (the failure is kept as small as it got; the reducer takes it from there),
        so a shard ends on time (a shrink past its deadline left shards of `fuzz throughput` unfinished)."""
        start, compiles = self.shrinking_since
        return (self.time_up() or self.runner.compiles - compiles >= self.opts.shrink_compiles
                or time.monotonic() - start > self.opts.shrink_time)

    def progress(self) -> str:
        left = f", {max(0.0, self.deadline - time.monotonic()) / 60:.1f} min left" if self.deadline else ""
        numerics = self.runner.statuses.get("numerics", 0)
        return (f"{self.generated} examples, {self.runner.compiles} compiles, {len(self.failures)} finding(s), "
                f"{numerics} numerics-only{left}")

    def check(self, program: Program) -> None:
        """The hypothesis test body: raise FuzzFailure for a failure not masked."""
        if self.shrinking_since is None:
            if self.time_up():
                raise TimeUp
            self.generated += 1
            if self.generated % 25 == 0:
                self.say(self.progress())
        elif program.key() not in self.runner.cache and self.shrink_spent():
            return  # shrinking budget spent: keep the smallest failure found so far
        outcome = self.runner.outcome(program)
        if not Answer.from_wire(outcome).failed:
            return
        failure = classify(outcome, program, self.generated)
        if self.masks.matches(failure):
            self.masked += 1
            return
        if self.shrinking_since is None:
            self.say(f"example {self.generated}: {failure.key}; shrinking")
            self.shrinking_since = (time.monotonic(), self.runner.compiles)
        raise FuzzFailure(failure)

    def database(self):
        """Hypothesis's example database: the folder asked for (shared by runs, by pytest
        targets and HypoFuzz), read-only when replaying so that replays delete nothing."""
        from hypothesis.database import DirectoryBasedExampleDatabase, ReadOnlyDatabase

        if self.opts.database is None:
            return None
        db = DirectoryBasedExampleDatabase(str(self.opts.database))
        return ReadOnlyDatabase(db) if self.opts.replay else db

    def round(self, number: int) -> Failure | None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, settings

        remaining = self.opts.max_examples - self.generated
        phases = (Phase.reuse, Phase.shrink) if self.opts.replay else (Phase.generate, Phase.shrink)
        config = settings(max_examples=max(1, remaining), database=self.database(), deadline=None,
                          derandomize=False, suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                          phases=phases, verbosity=Verbosity.quiet, print_blob=False)

        def fuzz_program(program):
            self.check(program)

        # The database key: this function's digest plus what the programs are drawn from. The
        # seed is set on the test as @seed sets it, without @seed's turning the database off.
        fuzz_program._hypothesis_internal_add_digest = database_digest(self.opts)
        test = config(given(program=self.strategy)(fuzz_program))
        test._hypothesis_internal_use_seed = self.opts.seed + number
        self.shrinking_since = None
        try:
            test()
        except FuzzFailure as exc:
            return exc.failure
        except TimeUp:
            return None
        except unittest.SkipTest:  # a replay with nothing saved under these options: nothing to run
            if not self.opts.replay:
                raise
            self.say("nothing saved in the example database under these options: nothing to replay")
        return None

    def shortest_prefix(self, failure: Failure) -> Failure:
        """The program cut after the first step that shows the same failure. Hypothesis
        rarely drops a leading step (the later ones read its output), and for an exception
        this names the op to blame: the step without which it does not happen."""
        program, steps = failure.program, len(failure.program.steps)

        def first_failing(counts: list[int]) -> int | None:  # one at a time, shortest first
            return next((i for i, count in enumerate(counts) if self.same_failure(program.prefix(count), failure)),
                        None)

        count = shortest_failing_prefix(1, steps, first_failing, splits=max(1, steps - 1))
        if count == steps:
            return failure
        shorter = classify(self.runner.outcome(program.prefix(count)), program.prefix(count), failure.example)
        if shorter.kind != "accuracy":
            shorter.suspects = [shorter.program.steps[-1].op]
        return shorter

    def drop_steps(self, failure: Failure) -> Failure:
        """Each step the failure does not need, taken out (its output fed in as an input), from
        the first: hypothesis cannot drop a step whose output a later one reads. What is left
        of an exception's program names the ops to blame."""
        index = 0
        while index < len(failure.program.steps) and len(failure.program.steps) > 1:
            try:
                candidate = failure.program.without_step(index, failure.program.eager_values())
            except Exception:  # a step eager cannot run on its own: keep it
                index += 1
                continue
            if candidate.steps and self.same_failure(candidate, failure):
                failure = classify(self.runner.outcome(candidate), candidate, failure.example)
            else:
                index += 1
        return failure

    def same_failure(self, program: Program, failure: Failure) -> bool:
        outcome = self.runner.outcome(program)
        answer = Answer.from_wire(outcome)
        return answer.failed and answer.signature == failure.signature \
            and (gradient_of(outcome, program) is None) == (failure.gradient is None)

    def run(self) -> list[Failure]:
        """Rounds until the budget is spent; the failures, most costly for a user first."""
        self._rounds()
        self.failures.sort(key=lambda f: f.rank)
        return self.failures

    def _rounds(self) -> None:
        from hypothesis.errors import HypothesisException

        for number in itertools.count():
            if self.generated >= self.opts.max_examples or self.time_up():
                break
            try:
                failure = self.round(number)
            except HypothesisException as exc:  # e.g. every draw rejected: nothing more to try
                self.say(f"hypothesis stopped: {type(exc).__name__}: {str(exc).splitlines()[0][:200]}")
                self.stopped = "hypothesis"
                break
            if failure is None:
                break
            failure = self.drop_steps(self.shortest_prefix(failure))
            self.failures.append(failure)
            self.masks.known.append(failure)
            self.say(f"finding {len(self.failures)}: {failure.key} (ops {', '.join(failure.program.ops())}; "
                     f"{failure.dtype}); {self.progress()}")
        if self.time_up():
            self.stopped = "max-time"
        elif self.opts.replay:
            self.stopped = "replayed"

