"""`minify fuzz`: hypothesis fuzzing of Inductor lowerings, each distinct failure minified.

A campaign draws small programs (minifier.fuzz.strategies), checks each in a warm worker
process with the tool's one oracle (a crash or abort in compiled code kills only the
worker), and lets hypothesis shrink the first failure it meets. That failure is recorded and
masked, and the campaign goes on from a new seed with the examples it has left, so every
distinct failure is shrunk once. Each one is then written as a small standalone script
(`OUT/cases/<name>.py`, a torch.compile'd function on saved inputs, with any planted bug)
and handed to the normal pipeline, which captures, reduces, writes `OUT/bug-k/repro.py`,
verifies it in a fresh process and writes a regression test into `OUT/tests/`.

Two failures are the same when their signatures match and the ops to blame do: accuracy
signatures carry no op, so the op is taken from the first wrong output (every step's output
is returned); for an exception, every op of the program is a suspect.
"""
from __future__ import annotations

import argparse
import itertools
import json
import re
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import torch

from minifier.fuzz.strategies import Program

EXIT_CLEAN, EXIT_FOUND, EXIT_BAD_INPUT, EXIT_NOT_REPRODUCED = 0, 1, 2, 4

USAGE = """minify fuzz [--ops OP ...] [--dtypes DT ...] [--max-examples N] [--max-time T] [--seed S]
                   [--device D] [--inject SPEC] [--mask SIG_OR_OP] [-o OUT]

Draw small programs of Inductor-lowered ops, compare compiled with eager, shrink each
distinct failure with hypothesis and minify it into a verified repro. Exit status: 0 nothing
failed, 1 failures found (all reproduced), 4 a failure did not reproduce, 2 bad input."""


@dataclass
class FuzzOptions:
    ops: list[str] | None = None
    dtypes: list[str] | None = None
    max_examples: int = 200
    max_time: float | None = None  # seconds of campaign (drawing and checking; reduction comes after)
    seed: int = 0
    device: str = "cpu"
    injections: list[str] = field(default_factory=list)
    masks: list[str] = field(default_factory=list)
    out: Path = Path("minify-out/fuzz")
    max_steps: int = 3
    allow_nonfinite: bool = False
    shrink_compiles: int = 30  # new programs checked while shrinking one failure
    shrink_time: float = 120.0
    example_timeout: float = 120.0
    reduce: bool = True
    quiet: bool = False


@dataclass
class Failure:
    """One shrunk failing program and what it did."""

    signature: str
    kind: str
    message: str
    suspects: list[str]  # ops to blame
    program: Program = field(repr=False)
    example: int = 0  # examples drawn when it was first seen

    @property
    def key(self) -> str:
        return f"{self.signature} [{', '.join(self.suspects)}]"


class FuzzFailure(Exception):
    """Raised inside the hypothesis test so hypothesis shrinks the failing program."""

    def __init__(self, failure: Failure):
        super().__init__(f"{failure.key}: {failure.message}\n{failure.program!r}")
        self.failure = failure


def suspects(outcome: dict, program: Program) -> list[str]:
    """Ops to blame: the step of the first wrong output for accuracy, else every op."""
    if outcome.get("kind") == "accuracy":
        bad = next((m for m in outcome.get("metrics") or [] if not m.get("ok")), {})
        match = re.match(r"out\[(\d+)\]", bad.get("output", ""))
        if match and int(match.group(1)) < len(program.steps):
            return [program.steps[int(match.group(1))].op]
    return sorted(set(program.ops()))


def classify(outcome: dict, program: Program, example: int = 0) -> Failure:
    return Failure(outcome.get("signature") or outcome.get("kind", "?"), outcome.get("kind", "?"),
                   outcome.get("message", ""), suspects(outcome, program), program, example)


@dataclass
class Masks:
    """Failures a campaign no longer reports: the user's masks and those already found."""

    ops: set[str] = field(default_factory=set)  # a failure blaming any of these ops
    signatures: list[str] = field(default_factory=list)  # signature prefixes
    keys: set[str] = field(default_factory=set)  # exact `signature [ops]` keys (as in fuzz.json)
    known: list[Failure] = field(default_factory=list)

    @staticmethod
    def parse(specs: list[str]) -> "Masks":
        from minifier.fuzz.strategies import resolve_ops

        masks = Masks()
        for spec in specs:
            if spec.endswith("]") and " [" in spec:
                masks.keys.add(spec)
            elif "@" in spec:
                masks.signatures.append(spec)
            else:
                masks.ops |= {e.name for e in resolve_ops([spec])}
        return masks

    def matches(self, f: Failure) -> bool:
        if f.key in self.keys or self.ops & set(f.suspects) or any(f.signature.startswith(s) for s in self.signatures):
            return True
        return any(k.signature == f.signature and set(k.suspects) <= set(f.suspects) for k in self.known)


def to_device(t: torch.Tensor, device: str) -> torch.Tensor:
    """`t` on `device` with the same sizes, strides and storage offset (`.to` would not keep
    an expanded or offset layout)."""
    if t.device.type == torch.device(device).type:
        return t
    elements = t.untyped_storage().nbytes() // t.element_size()
    flat = torch.as_strided(t, (elements,), (1,), 0).to(device)
    return flat.as_strided(t.shape, t.stride(), t.storage_offset())


# --------------------------------------------------------------------------- checking

class Runner:
    """Checks programs in a warm worker process; answers are cached by program key."""

    def __init__(self, opts: FuzzOptions, work: Path):
        from compiler.inject import parse_spec
        from minifier.workers.pool import WorkerPool

        self.opts = opts
        self.work = work
        self.injections = [parse_spec(s).to_dict() for s in opts.injections]
        self.pool = WorkerPool(1, work / "logs", timeout=opts.example_timeout)
        self.cache: dict[str, dict] = {}
        self.statuses: Counter = Counter()

    @property
    def compiles(self) -> int:
        return len(self.cache)

    def outcome(self, program: Program) -> dict:
        key = program.key()
        if key not in self.cache:
            self.cache[key] = self._check(program, key)
            self.statuses[self.cache[key]["status"]] += 1
        return self.cache[key]

    def _check(self, program: Program, key: str) -> dict:
        from compiler.stages import CompileSpec

        case = self.work / "examples" / key
        case.mkdir(parents=True, exist_ok=True)
        torch.save({n: to_device(t, self.opts.device) for n, t in program.inputs.items()}, case / "values.pt")
        (case / "program.py").write_text(program.function_source())
        return self.pool.run({"op": "check", "spec": CompileSpec().to_dict(), "case_dir": str(case),
                              "inputs": list(program.inputs), "source": program.module_source(),
                              "injections": self.injections, "stage": "inductor"})

    def close(self) -> None:
        self.pool.close()


class Campaign:
    """Hypothesis rounds: each finds and shrinks one failure not yet masked, then masks it."""

    def __init__(self, opts: FuzzOptions, runner: Runner, masks: Masks, say):
        from minifier.fuzz.strategies import programs

        self.opts, self.runner, self.masks, self.say = opts, runner, masks, say
        self.strategy = programs(ops=opts.ops, dtypes=opts.dtypes, max_steps=opts.max_steps,
                                 allow_nonfinite=opts.allow_nonfinite, device_type=torch.device(opts.device).type)
        self.deadline = time.monotonic() + opts.max_time if opts.max_time else None
        self.generated = 0  # examples drawn outside shrinking, over all rounds
        self.masked = 0
        self.failures: list[Failure] = []
        self.shrinking_since: tuple[float, int] | None = None  # (time, compiles) at this round's first failure
        self.stopped = "max-examples"

    def time_up(self) -> bool:
        return self.deadline is not None and time.monotonic() > self.deadline

    def shrink_spent(self) -> bool:
        start, compiles = self.shrinking_since
        return (self.runner.compiles - compiles >= self.opts.shrink_compiles
                or time.monotonic() - start > self.opts.shrink_time)

    def check(self, program: Program) -> None:
        """The hypothesis test body: raise FuzzFailure for a failure not masked."""
        if self.shrinking_since is None:
            if self.time_up():
                return  # past the budget: let hypothesis run out without compiling
            self.generated += 1
            if self.generated % 25 == 0:
                self.say(f"{self.generated} examples, {self.runner.compiles} compiles, "
                         f"{len(self.failures)} distinct failure(s)")
        elif program.key() not in self.runner.cache and self.shrink_spent():
            return  # shrinking budget spent: keep the smallest failure found so far
        outcome = self.runner.outcome(program)
        if outcome.get("status") != "fail":
            return
        failure = classify(outcome, program, self.generated)
        if self.masks.matches(failure):
            self.masked += 1
            return
        if self.shrinking_since is None:
            self.say(f"example {self.generated}: {failure.key}; shrinking")
            self.shrinking_since = (time.monotonic(), self.runner.compiles)
        raise FuzzFailure(failure)

    def round(self, number: int) -> Failure | None:
        from hypothesis import HealthCheck, Phase, Verbosity, given, seed, settings

        remaining = self.opts.max_examples - self.generated
        config = settings(max_examples=remaining, database=None, deadline=None, derandomize=False,
                          suppress_health_check=list(HealthCheck), report_multiple_bugs=False,
                          phases=(Phase.generate, Phase.shrink), verbosity=Verbosity.quiet, print_blob=False)

        def fuzz_program(program):
            self.check(program)

        test = seed(self.opts.seed + number)(config(given(program=self.strategy)(fuzz_program)))
        self.shrinking_since = None
        try:
            test()
        except FuzzFailure as exc:
            return exc.failure
        return None

    def shortest_prefix(self, failure: Failure) -> Failure:
        """The program cut after the first step that shows the same failure. Hypothesis
        rarely drops a leading step (the later ones read its output), and for an exception
        this names the op to blame: the step without which it does not happen."""
        program = failure.program
        for count in range(1, len(program.steps)):
            outcome = self.runner.outcome(program.prefix(count))
            if outcome.get("status") == "fail" and outcome.get("signature") == failure.signature:
                shorter = classify(outcome, program.prefix(count), failure.example)
                if shorter.kind != "accuracy":
                    shorter.suspects = [shorter.program.steps[-1].op]
                return shorter
        return failure

    def run(self) -> list[Failure]:
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
            failure = self.shortest_prefix(failure)
            self.failures.append(failure)
            self.masks.known.append(failure)
            self.say(f"failure {len(self.failures)}: {failure.key} (ops {', '.join(failure.program.ops())})")
        if self.time_up():
            self.stopped = "max-time"
        return self.failures


# --------------------------------------------------------------------------- reduction

CASE_TEMPLATE = '''"""Found by `minify fuzz` (seed {seed}, example {example}): {key}

{message}
Inputs: {inputs}
"""
from pathlib import Path

import torch
{plant}

{function}

def main():
    inputs = torch.load(Path(__file__).with_name({inputs_file!r}), weights_only=True)
    return torch.compile(program)(*inputs)


if __name__ == "__main__":
    main()
'''


def case_name(index: int, failure: Failure) -> str:
    ops = "_".join(re.sub(r"\W+", "_", op.split(".")[-1]) for op in failure.suspects[:3])
    return f"fuzz_{index}_{ops}_{failure.kind}"


def write_case(failure: Failure, folder: Path, name: str, opts: FuzzOptions) -> Path:
    """A standalone script that compiles the failing program on its saved inputs."""
    folder.mkdir(parents=True, exist_ok=True)
    program = failure.program
    torch.save([to_device(t, opts.device) for t in program.input_list()], folder / f"{name}.pt")
    plant = "".join(f"\nplant({spec!r})" for spec in opts.injections)
    plant = f"\nfrom compiler.inject import plant\n{plant}\n" if plant else ""
    script = folder / f"{name}.py"
    script.write_text(CASE_TEMPLATE.format(
        seed=opts.seed, example=failure.example, key=failure.key, message=failure.message.replace('"""', "'''"),
        inputs="; ".join(program.describe_inputs()), plant=plant, function=program.function_source(),
        inputs_file=f"{name}.pt"))
    return script


def reduce_failure(script: Path, out: Path, tests: Path, quiet: bool) -> dict:
    """Run the normal minify pipeline on a case script; the row fuzz.json keeps."""
    from minifier.pipeline import Options, UserError, run
    from minifier.report.console import ConsoleUI

    try:
        result = run(Options(script=script, out=out, emit_test=tests), ConsoleUI(quiet=quiet))
    except UserError as exc:
        return {"exit": exc.code, "error": str(exc), "verified": False}
    report = result.report
    return {"exit": result.code, "repro": report.get("repro"), "verified": report.get("verified", False),
            "reduced_ops": report.get("ops"), "stage": report.get("stage"),
            "repro_signature": (report.get("failure") or {}).get("signature"), "tests": report.get("tests", []),
            "error": None if result.code == 0 else report.get("status")}


def mark_duplicates(rows: list[dict]) -> None:
    """Failures that reduce to the same ops with the same signature are one bug."""
    seen: dict[tuple, int] = {}
    for number, row in enumerate(rows, 1):
        if not row.get("verified") or not row.get("reduced_ops"):
            continue
        ident = (row.get("repro_signature"), tuple(row["reduced_ops"]))
        if ident in seen:
            row["duplicate_of"] = seen[ident]
        else:
            seen[ident] = number


# --------------------------------------------------------------------------- command line

def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minify fuzz", usage=USAGE)
    p.add_argument("--ops", nargs="+", metavar="OP", help="ops to draw from (OpInfo names; default: all lowered)")
    p.add_argument("--dtypes", nargs="+", metavar="DT", help="dtypes to draw (e.g. float32 int64; default: all)")
    p.add_argument("--max-examples", type=int, default=200, help="programs to draw in all (default 200)")
    p.add_argument("--max-time", type=float, help="stop drawing after this many seconds")
    p.add_argument("--seed", type=int, default=0, help="hypothesis seed (default 0)")
    p.add_argument("--device", default="cpu", help="device of the inputs (default cpu)")
    p.add_argument("--inject", action="append", default=[], metavar="SPEC", help="plant a compiler bug (repeatable)")
    p.add_argument("--mask", action="append", default=[], metavar="SIG_OR_OP",
                   help="do not report a known failure: an op, a signature prefix or a key from fuzz.json")
    p.add_argument("-o", "--out", type=Path, default=Path("minify-out/fuzz"), help="output folder")
    p.add_argument("--max-steps", type=int, default=3, help="ops per program at most (default 3)")
    p.add_argument("--allow-nonfinite", action="store_true", help="also draw NaN/Inf/-0.0 input values")
    p.add_argument("--no-reduce", action="store_true", help="only find and shrink; do not run the reducer")
    p.add_argument("--list-ops", action="store_true", help="print the ops that can be drawn and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    return p


def options(ns: argparse.Namespace) -> FuzzOptions:
    return FuzzOptions(ops=ns.ops, dtypes=ns.dtypes, max_examples=ns.max_examples, max_time=ns.max_time,
                       seed=ns.seed, device=ns.device, injections=ns.inject, masks=ns.mask, out=ns.out,
                       max_steps=max(1, ns.max_steps), allow_nonfinite=ns.allow_nonfinite, reduce=not ns.no_reduce,
                       quiet=ns.quiet)


def validate(opts: FuzzOptions) -> str | None:
    """The one-line reason the options cannot run, or None."""
    from compiler.inject import bad_spec
    from minifier.fuzz.strategies import parse_dtypes, resolve_ops

    try:
        resolve_ops(opts.ops)
        parse_dtypes(opts.dtypes)
        Masks.parse(opts.masks)
        torch.device(opts.device)
    except (KeyError, RuntimeError) as exc:
        return str(exc).strip("'\"")
    return bad_spec(opts.injections)


def fuzz(opts: FuzzOptions, console) -> dict:
    """Run a campaign and reduce its failures; returns what fuzz.json holds."""
    from rich.markup import escape

    start = time.perf_counter()
    out = opts.out.resolve()
    work = out / "work"
    for stale in [work, out / "cases", out / "tests", *out.glob("bug-*")]:  # this folder is ours
        shutil.rmtree(stale, ignore_errors=True)
    work.mkdir(parents=True)

    def say(text: str) -> None:
        if not opts.quiet:
            console.print(f"[dim]{time.perf_counter() - start:7.1f}s[/dim] {escape(text)}", highlight=False)

    say("starting the worker")
    runner = Runner(opts, work)
    campaign = Campaign(opts, runner, Masks.parse(opts.masks), say)
    try:
        failures = campaign.run()
    finally:
        runner.close()
    campaign_seconds = time.perf_counter() - start
    rows = [failure_row(i, f) for i, f in enumerate(failures, 1)]
    result = {"seed": opts.seed, "ops": opts.ops, "dtypes": opts.dtypes, "device": opts.device,
              "injections": opts.injections, "masks": opts.masks, "examples": campaign.generated,
              "compiles": runner.compiles, "outcomes": dict(runner.statuses), "masked": campaign.masked,
              "stopped": campaign.stopped, "campaign_seconds": round(campaign_seconds, 1), "failures": rows}
    write_json(out, result)
    for number, (failure, row) in enumerate(zip(failures, rows), 1):
        name = case_name(number, failure)
        script = write_case(failure, out / "cases", name, opts)
        row["case"] = str(script)
        if opts.reduce:
            say(f"reducing failure {number} ({failure.key}) from {script}")
            row.update(reduce_failure(script, out / f"bug-{number}", out / "tests", opts.quiet))
        write_json(out, result)
    mark_duplicates(rows)
    result["seconds"] = round(time.perf_counter() - start, 1)
    write_json(out, result)
    return result


def failure_row(number: int, failure: Failure) -> dict:
    return {"number": number, "key": failure.key, "signature": failure.signature, "kind": failure.kind,
            "message": failure.message, "suspects": failure.suspects, "ops": failure.program.ops(),
            "example": failure.example, "program": failure.program.function_source(),
            "inputs": failure.program.describe_inputs()}


def write_json(out: Path, result: dict) -> None:
    (out / "fuzz.json").write_text(json.dumps(result, indent=1, default=str))


def exit_code(result: dict) -> int:
    rows = result["failures"]
    if not rows:
        return EXIT_CLEAN
    if any("verified" in r and not r["verified"] for r in rows):
        return EXIT_NOT_REPRODUCED
    return EXIT_FOUND


def print_summary(result: dict, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="minify fuzz")
    for column in ("#", "failure", "shrunk ops", "reduced ops", "repro", "verified"):
        table.add_column(column, overflow="fold")
    for row in result["failures"]:
        verified = row.get("verified")
        mark = "-" if verified is None else "[green]yes[/green]" if verified else "[red]no[/red]"
        if row.get("duplicate_of"):
            mark += f" (same bug as #{row['duplicate_of']})"
        cells = (row["key"], ", ".join(row["ops"]), ", ".join(row.get("reduced_ops") or []),
                 row.get("repro") or row.get("error") or row.get("case", ""))
        table.add_row(str(row["number"]), *map(escape, cells), mark)
    console.print(table)
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(result["outcomes"].items()))
    console.print(f"examples {result['examples']} ({result['compiles']} compiled: {outcomes or 'none'}; "
                  f"masked {result['masked']}), stopped by {result['stopped']}, "
                  f"campaign {result['campaign_seconds']} s, total {result['seconds']} s; "
                  f"distinct failures {len(result['failures'])}", highlight=False)


def list_ops(console) -> None:
    from minifier.fuzz.strategies import catalog

    for name, entry in sorted(catalog().items()):
        console.print(f"{name:40s} {entry.family}", highlight=False)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    ns = parser().parse_args(sys.argv[1:] if argv is None else argv)
    console = Console()
    if ns.list_ops:
        list_ops(console)
        return EXIT_CLEAN
    opts = options(ns)
    problem = validate(opts)
    if problem:
        console.print(f"[bold red]minify fuzz:[/bold red] {problem}", highlight=False)
        return EXIT_BAD_INPUT
    try:
        result = fuzz(opts, Console(stderr=True))
    except KeyboardInterrupt:
        console.print("[bold red]minify fuzz:[/bold red] interrupted")
        return 130
    print_summary(result, console)
    return exit_code(result)


if __name__ == "__main__":
    sys.exit(main())
