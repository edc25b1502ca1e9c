"""`minify fuzz`: hypothesis fuzzing of Inductor lowerings, each distinct failure minified.

The command line, the run of one campaign (minifier.fuzz.campaign) followed by the reduction of
its failures (minifier.fuzz.cases), fuzz.json and the summary table.
"""
from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

import torch

from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_FOUND, EXIT_INTERRUPTED, EXIT_NOT_REPRODUCED, EXIT_OK
from minifier.fuzz.campaign import Campaign, FuzzOptions, Runner
from minifier.fuzz.cases import case_name, mark_duplicates, reduce_failure, write_case
from minifier.fuzz.failures import Failure, Masks

USAGE = """minify fuzz [--ops OP ...] [--dtypes DT ...] [--max-examples N] [--max-time T] [--seed S]
                   [--device D] [--inject SPEC] [--mask SIG_OR_OP] [-o OUT]

Draw small programs of Inductor-lowered ops, compare compiled with eager, shrink each
distinct failure with hypothesis and minify it into a verified repro. Exit status: 0 nothing
failed, 1 failures found (all reproduced), 4 a failure did not reproduce, 2 bad input."""



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
    from minifier.fuzz.op_catalog import parse_dtypes, resolve_ops

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
        return EXIT_OK
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
    from minifier.fuzz.op_catalog import catalog

    for name, entry in sorted(catalog().items()):
        console.print(f"{name:40s} {entry.family}", highlight=False)


def main(argv: list[str] | None = None) -> int:
    from rich.console import Console

    ns = parser().parse_args(sys.argv[1:] if argv is None else argv)
    console = Console()
    if ns.list_ops:
        list_ops(console)
        return EXIT_OK
    opts = options(ns)
    problem = validate(opts)
    if problem:
        console.print(f"[bold red]minify fuzz:[/bold red] {problem}", highlight=False)
        return EXIT_BAD_INPUT
    try:
        result = fuzz(opts, Console(stderr=True))
    except KeyboardInterrupt:
        console.print("[bold red]minify fuzz:[/bold red] interrupted")
        return EXIT_INTERRUPTED
    print_summary(result, console)
    return exit_code(result)


if __name__ == "__main__":
    sys.exit(main())
