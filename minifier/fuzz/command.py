"""`minify fuzz`: hypothesis fuzzing of Inductor lowerings, each distinct failure minified.

The command line, the run of one campaign (minifier.fuzz.campaign) followed by the reduction of
its failures (minifier.fuzz.cases), fuzz.json and the summary table.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import random
import shutil
import sys
import time
from pathlib import Path

import torch

from compiler.program_files import RunPrograms
from minifier.exit_codes import (EXIT_BAD_INPUT, EXIT_CANNOT_WRITE, EXIT_FOUND, EXIT_INTERRUPTED, EXIT_NOT_REPRODUCED,
                                 EXIT_OK)
from minifier.fuzz import campaign_command, campaign_options
from minifier.fuzz.campaign import Campaign, FuzzOptions, Runner
from minifier.fuzz.campaign_command import findings_line
from minifier.fuzz.diverted_output import diverted_output
from minifier.fuzz.known import campaign_masks, record_campaign
from minifier.fuzz.shard import ShardedCampaign
from minifier.fuzz.cases import case_name, mark_duplicates, numerics_apart, reduce_failure, write_case
from minifier.fuzz.failures import RANK_WORDS, RANKS, Failure, Masks
from minifier.report.live import LiveLine
from repro.one_line_parser import OneLineParser

USAGE = """minify fuzz [--ops OP ...] [--dtypes DT ...] [--max-examples N] [--max-time T] [--seed S]
                   [--device D] [--inject SPEC] [--mask SIG_OR_OP] [--finite-only] [--backward P]
                   [--db DIR] [--replay] [-o OUT] [--shard I/N] [--known RECORD] [--known-issues FILE]
                   [--cluster ADDRESS [--shards N]]
       minify fuzz merge DIR... -o OUT     minify fuzz recheck DIR
       minify fuzz throughput [--workers 1,4,8] [--seconds 90]

Draw small programs of Inductor-lowered ops, compare compiled with eager, shrink each
distinct failure with hypothesis and minify it into a verified repro. Exit status: 0 nothing
failed, 1 failures found (all reproduced), 4 a failure did not reproduce, 2 bad input.

  minify fuzz --max-time 1800                 a 30-minute campaign on the installed compiler
  minify fuzz --replay                        check the failures saved by earlier campaigns"""


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="minify fuzz", usage=USAGE)
    p.add_argument("--ops", nargs="+", metavar="OP", help="ops to draw from (OpInfo names; default: all lowered)")
    p.add_argument("--dtypes", nargs="+", metavar="DT", help="dtypes to draw (e.g. float32 int64; default: all)")
    p.add_argument("--max-examples", type=int,
                   help="programs to draw in all (default 200, or no limit with --max-time)")
    p.add_argument("--max-time", type=float, help="stop drawing after this many seconds")
    p.add_argument("--seed", type=int, help="hypothesis seed (default: a random one, printed, as hypothesis draws "
                                            "and prints its own; --seed S reruns a campaign)")
    p.add_argument("--device", default="cpu", help="device of the inputs (default cpu)")
    p.add_argument("--inject", action="append", default=[], metavar="SPEC", help="plant a compiler bug (repeatable)")
    p.add_argument("--mask", action="append", default=[], metavar="SIG_OR_OP",
                   help="do not report a known failure: an op, a rung (signed_zero, layout, ...), a signature prefix "
                        "or a key from fuzz.json")
    p.add_argument("-o", "--out", type=Path, default=Path("minify-out/fuzz"), help="output folder")
    p.add_argument("--max-steps", type=int, default=4, help="ops per program at most (default 4)")
    p.add_argument("--finite-only", action="store_true", help="draw no NaN/Inf input values (edges such as "
                   "-0.0, denormals and integer min/max are still drawn)")
    p.add_argument("--allow-nonfinite", action="store_true", help=argparse.SUPPRESS)  # the default now
    p.add_argument("--backward", type=float, default=0.25, metavar="P",
                   help="share of programs also checked through backward: floating inputs require grad and "
                        "their gradients are compared (default 0.25; 0: forward only)")
    p.add_argument("--db", type=Path, metavar="DIR", help="hypothesis example database to save findings in and "
                   "replay from (default OUT/examples-db; share one folder between campaigns, pytest-xdist "
                   "and HypoFuzz)")
    p.add_argument("--replay", action="store_true", help="only replay the failures saved in the database")
    p.add_argument("--no-reduce", action="store_true", help="only find and shrink; do not run the reducer")
    p.add_argument("--list-ops", action="store_true", help="print the ops that can be drawn and exit")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    campaign_options.add_arguments(p)
    return p


def options(ns: argparse.Namespace) -> FuzzOptions:
    max_examples = ns.max_examples if ns.max_examples is not None else 10**9 if ns.max_time else 200
    # `--mask signed_zero,layout` is two masks; a signature or a fuzz.json key may hold commas itself
    masks = [m for spec in ns.mask for m in ([spec] if "@" in spec or "[" in spec else spec.split(",")) if m]
    return FuzzOptions(ops=ns.ops, dtypes=ns.dtypes, max_examples=max_examples, max_time=ns.max_time,
                       seed=random.randrange(2**32) if ns.seed is None else ns.seed, device=ns.device, injections=ns.inject, masks=masks, out=ns.out,
                       max_steps=ns.max_steps, allow_nonfinite=not ns.finite_only, reduce=not ns.no_reduce,
                       quiet=ns.quiet, database=ns.db or ns.out / "examples-db", replay=ns.replay,
                       backward=ns.backward, unit_examples=ns.unit_examples, known=ns.known,
                       known_issues=ns.known_issues)


def validate(opts: FuzzOptions, ns: argparse.Namespace) -> str | None:
    """The one-line reason the options cannot run, or None."""
    from compiler.inject import bad_spec
    from minifier.fuzz.op_catalog import parse_dtypes, resolve_ops

    if not 0 <= opts.backward <= 1:
        return f"--backward {opts.backward}: a share, from 0 to 1"
    for value, flag in ((opts.max_examples, "--max-examples"), (opts.max_time, "--max-time"),
                        (opts.max_steps, "--max-steps")):
        if value is not None and not value > 0:
            return f"{flag} {value}: must be greater than zero"
    problem = foreign_file(opts) or campaign_options.problem(opts, ns)  # the cheap checks first
    if problem:
        return problem
    try:
        resolve_ops(opts.ops)
        parse_dtypes(opts.dtypes)
        Masks.parse(opts.masks)
        torch.device(opts.device)
    except (KeyError, RuntimeError) as exc:
        return str(exc).strip("'\"")
    return bad_spec(opts.injections)


# What a fuzz run writes at the top of its folder; it empties work/, cases/, tests/ and bug-k/.
FUZZ_OUTPUTS = ("fuzz.json", "fuzz.html", "fuzz.log", "replay.json", "replay.html", "replay.log", "replay", "work",
                "cases", "tests", "examples-db", "findings.json", "findings", "shards")


def foreign_file(opts: FuzzOptions) -> str | None:
    """An output folder that holds anything a fuzz run did not write is refused: a run empties
    its own folders there (work/, cases/, tests/, bug-k/), and those could be the user's."""
    out = opts.out
    if out.exists() and not out.is_dir():
        return f"-o {out}: not a folder"
    if not out.is_dir():
        return None
    names = sorted(p.name for p in out.iterdir())
    if names and not {"fuzz.json", "fuzz.log", "replay.json", "replay.log"} & set(names):
        return f"output folder {out} holds files that no fuzz run wrote (e.g. {out / names[0]}); choose another with -o"
    others = [n for n in names if n not in FUZZ_OUTPUTS and not n.startswith("bug-")]
    return f"output folder {out} holds files that no fuzz run wrote (e.g. {out / others[0]}); choose another " \
           f"with -o" if others else None


def fuzz(opts: FuzzOptions, console) -> dict:
    """Run a campaign and reduce its failures; returns what fuzz.json holds."""
    from rich.markup import escape

    start = time.perf_counter()
    base = files_of(opts)  # a replay's own files go to OUT/replay/: the campaign's stay as they are
    work = base / "work"
    for stale in [work, base / "cases", base / "tests", *base.glob("bug-*")]:  # this folder is ours
        shutil.rmtree(stale, ignore_errors=True)
    work.mkdir(parents=True)

    status = FuzzStatus(start)

    def say(text: str) -> None:
        status.phase = text
        if not opts.quiet:
            console.print(f"[dim]{time.perf_counter() - start:7.1f}s[/dim] {escape(text)}", highlight=False)

    with LiveLine(console, status.text) if not opts.quiet else contextlib.nullcontext():
        return _fuzz(opts, console, say, status, start)


def _fuzz(opts: FuzzOptions, console, say, status: "FuzzStatus", start: float) -> dict:
    """fuzz's body, under its status line."""
    out, record, base = opts.out.resolve(), record_name(opts), files_of(opts)

    say(f"seed {opts.seed} (--seed {opts.seed} draws the same programs again)")
    say(f"starting the worker; what torch and its libraries print goes to {out / (record + '.log')}")
    for difference in differences(opts):
        say(f"replaying with {difference}")
    programs = RunPrograms.name(base / "work")  # the examples' graphs as files, beside them (work/programs)
    runner = Runner(opts, base / "work")
    masks = campaign_masks(opts)
    campaign = ShardedCampaign(opts, runner, masks, say) if opts.shard else Campaign(opts, runner, masks(), say)
    status.campaign = campaign
    try:
        failures = campaign.run()
    finally:
        runner.close()
        programs.close()
    campaign_seconds = time.perf_counter() - start
    status.campaign = None  # its counts are final: the line goes back to the step alone
    rows = [failure_row(i, f) for i, f in enumerate(failures, 1)]
    result = {"seed": opts.seed, "ops": opts.ops, "dtypes": opts.dtypes, "device": opts.device,
              "injections": opts.injections, "masks": opts.masks, "examples": campaign.generated,
              "compiles": runner.compiles, "outcomes": dict(runner.statuses), "masked": campaign.masked,
              "stopped": campaign.stopped, "campaign_seconds": round(campaign_seconds, 1), "out": str(out),
              "database": str(opts.database) if opts.database else None, "failures": rows,
              "record": record, "differences": differences(opts), "shard": str(opts.shard or "") or None,
              "units": getattr(campaign, "units_run", None), "unit_examples": opts.unit_examples}
    write_json(out, result)
    for number, (failure, row) in enumerate(zip(failures, rows), 1):
        name = case_name(number, failure)
        script = write_case(failure, base / "cases", name, opts)
        row["case"] = str(script)
        if opts.reduce:
            say(f"reducing failure {number} ({failure.key}) from {script}")
            row.update(reduce_failure(script, base / f"bug-{number}", base / "tests", opts.quiet, console))
        write_json(out, result)
    result["findings"] = record_campaign(opts, failures, rows) if not opts.replay else None
    result["failures"], result["numerics"] = numerics_apart(rows)
    mark_duplicates(result["failures"])
    result["seconds"] = round(time.perf_counter() - start, 1)
    write_json(out, result)
    write_findings_html(out, result)
    return result


class FuzzStatus:
    """The ticking line of a campaign: examples drawn, compiled, failing, findings, time left."""

    def __init__(self, start: float):
        self.start, self.phase, self.campaign = start, "starting the worker", None

    def text(self):
        from minifier.report.live import clock, status_text

        c = self.campaign
        counts = [] if c is None else [f"{c.generated} drawn", f"{c.runner.compiles} compiled",
                                       f"{c.runner.statuses.get('fail', 0)} failing", f"{len(c.failures)} finding(s)"]
        left = [] if c is None or c.deadline is None else \
            [f"{clock(max(0.0, c.deadline - time.monotonic())).strip()} left"]
        return status_text(self.start, counts + left + [self.phase])


def failure_row(number: int, failure: Failure) -> dict:
    return {"number": number, "key": failure.key, "signature": failure.signature, "kind": failure.kind,
            "rank": failure.rank, "cost": RANKS[failure.rank], "rung": failure.rung, "dtype": failure.dtype,
            "message": failure.message, "suspects": failure.suspects, "ops": failure.program.ops(),
            "example": failure.example, "dynamic": failure.program.dynamic,
            "backward": failure.program.backward, "gradient": failure.gradient,
            "program": failure.program.function_source(),
            "inputs": failure.program.describe_inputs()}


def record_name(opts: FuzzOptions) -> str:
    """A campaign writes fuzz.json/.html/.log; a replay, replay.json/.html/.log beside them."""
    return "replay" if opts.replay else "fuzz"


def files_of(opts: FuzzOptions) -> Path:
    """Where the run's work, cases, tests and bug-k folders go: OUT, or OUT/replay for a replay."""
    return opts.out.resolve() / ("replay" if opts.replay else "")


CAMPAIGN_OPTIONS = {"ops": "--ops", "dtypes": "--dtypes", "device": "--device", "injections": "--inject"}


def differences(opts: FuzzOptions) -> list[str]:
    """A replay's options that differ from the campaign's in OUT/fuzz.json (its saved failures are
    keyed by what programs were drawn from, so they are not found under other ones)."""
    if not opts.replay:
        return []
    try:
        campaign = json.loads((opts.out / "fuzz.json").read_text())
    except (OSError, ValueError):
        return []
    said = []
    for key, flag in CAMPAIGN_OPTIONS.items():
        then, now = campaign.get(key), getattr(opts, key)
        lists = isinstance(now, list) or isinstance(then, list) or now is None
        if (sorted(then or []) != sorted(now or [])) if lists else then != now:
            said.append(f"{flag} {now or 'default'}, not the campaign's {then or 'default'} (fuzz.json): "
                        f"its saved failures are found only under its own options")
    return said


def write_json(out: Path, result: dict) -> None:
    (out / f"{result.get('record', 'fuzz')}.json").write_text(json.dumps(result, indent=1, default=str))


def exit_code(result: dict) -> int:
    rows = result["failures"]
    if not rows:
        return EXIT_OK
    if any("verified" in r and not r["verified"] for r in rows):
        return EXIT_NOT_REPRODUCED
    return EXIT_FOUND


FINDING_COLUMNS = ("#", "cost", "op", "dtype", "rung", "blamed", "repro", "verified")


def finding_cells(row: dict) -> tuple[str, ...]:
    """One finding as the table's cells (console and HTML)."""
    verified = row.get("verified")
    mark = "-" if verified is None else "yes" if verified else "no"
    if row.get("duplicate_of"):
        mark += f" (same bug as #{row['duplicate_of']})"
    ops = ", ".join(row.get("reduced_ops") or row["suspects"])
    return (str(row["number"]), row.get("cost", ""), ops, row.get("dtype", ""), row.get("rung") or row["kind"],
            row.get("blame") or "", row.get("repro") or row.get("error") or row.get("case", ""), mark)


def print_summary(result: dict, console) -> None:
    from rich.markup import escape
    from rich.table import Table

    table = Table(title="minify fuzz: findings, most costly first")
    for column in FINDING_COLUMNS:
        table.add_column(column, overflow="fold")
    for row in result["failures"]:
        cells = finding_cells(row)
        color = "green" if row.get("verified") else "red" if row.get("verified") is False else "white"
        table.add_row(*map(escape, cells[:-1]), f"[{color}]{escape(cells[-1])}[/{color}]")
    console.print(table)
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(result["outcomes"].items()))
    console.print(f"examples {result['examples']} ({result['compiles']} compiled: {outcomes or 'none'}; "
                  f"masked {result['masked']}), stopped by {result['stopped']}, "
                  f"campaign {result['campaign_seconds']} s, total {result['seconds']} s; seed {result['seed']}; "
                  f"distinct findings {len(result['failures'])}; {result['out']}/{result.get('record', 'fuzz')}.html",
                  highlight=False)
    if result.get("findings"):
        console.print(findings_line(result["findings"]), highlight=False)
    for difference in result.get("differences", []):
        console.print(f"replayed with {difference}", highlight=False)
    for row in result.get("numerics", []):
        console.print(f"not a finding: #{row['number']} ({', '.join(row['suspects'])}, {row.get('dtype', '')}): "
                      f"minify judged it numerics (exit 5), not a miscompile", highlight=False)


def write_findings_html(out: Path, result: dict) -> None:
    """OUT/fuzz.html: the findings table, each with its program and message."""
    from html import escape

    head = "".join(f"<th>{escape(c)}</th>" for c in FINDING_COLUMNS)
    body = []
    for row in result["failures"]:
        cells = "".join(f"<td>{escape(c)}</td>" for c in finding_cells(row))
        body.append(f"<tr>{cells}</tr><tr><td></td><td colspan={len(FINDING_COLUMNS) - 1}>"
                    f"<pre>{escape(row['message'])}\n\n{escape(row['program'])}</pre></td></tr>")
    outcomes = ", ".join(f"{k} {v}" for k, v in sorted(result["outcomes"].items()))
    legend = "; ".join(f"<b>{escape(RANKS[r])}</b>: {escape(RANK_WORDS[r])}" for r in sorted(RANKS))
    (out / f"{result.get('record', 'fuzz')}.html").write_text(
        "<!doctype html><meta charset=utf-8><title>minify fuzz</title><style>body{font-family:sans-serif}"
        "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top}table{border-collapse:collapse}</style>"
        f"<h1>minify fuzz: {len(result['failures'])} finding(s)</h1><p>examples {result['examples']}, "
        f"{result['compiles']} compiled ({escape(outcomes)}), stopped by {escape(str(result['stopped']))}, "
        f"{result.get('seconds', '')} s; seed {result['seed']}</p><p>cost, most costly first: {legend}</p>"
        f"<table><tr>{head}</tr>{''.join(body)}</table>"
        + "".join(f"<p>Not a finding: #{row['number']} ({escape(', '.join(row['suspects']))}): minify judged it "
                  f"numerics (exit 5), not a miscompile.</p>" for row in result.get("numerics", [])))


def list_ops(console) -> None:
    from minifier.fuzz.op_catalog import catalog

    for name, entry in sorted(catalog().items()):
        console.print(f"{name:40s} {entry.family}", highlight=False)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    from rich.markup import escape

    from minifier.report.terminal import error_console, wide_console

    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "throughput":
        from minifier.fuzz.throughput import main as throughput_main
        return throughput_main(argv[1:])
    if argv and argv[0] in ("merge", "recheck") or any(a.split("=")[0] == "--cluster" for a in argv):
        return campaign_command.main(argv, (parser, options, validate))
    ns = parser().parse_args(argv)
    console, errors = wide_console(), error_console()
    if ns.list_ops:
        list_ops(console)
        return EXIT_OK
    opts = options(ns)
    problem = validate(opts, ns)
    if problem:
        errors.print(f"[bold red]minify fuzz:[/bold red] {escape(problem)}", highlight=False)
        return EXIT_BAD_INPUT
    work = files_of(opts) / "work"
    try:
        work.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        errors.print(f"[bold red]minify fuzz:[/bold red] cannot write to {escape(str(work))}: {exc.strerror}",
                     highlight=False)
        return EXIT_CANNOT_WRITE
    terminals = console.is_terminal, errors.is_terminal  # asked once diverted, the answer is the log's: no
    with diverted_output(opts.out.resolve() / f"{record_name(opts)}.log") as (stdout, stderr):
        console = Console(file=stdout, force_terminal=terminals[0], width=console.width)
        errors = Console(file=stderr, force_terminal=terminals[1], width=errors.width)
        try:
            result = fuzz(opts, errors)
        except KeyboardInterrupt:
            errors.print("[bold red]minify fuzz:[/bold red] interrupted")
            return EXIT_INTERRUPTED
        print_summary(result, console)
    return exit_code(result)


if __name__ == "__main__":
    sys.exit(main())
