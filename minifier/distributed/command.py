"""`minify [options] torchrun [torchrun options] SCRIPT [args]` (or `python -m torch.distributed.run`):
the same run as `minify SCRIPT`, with the program launched as a torchrun job, every rank recorded
(minifier/distributed/job.py), and the failing rank's graph reduced on one process."""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from compiler.rank_capture import RANK_PREFIX
from minifier.distributed.torchrun_args import TorchrunCommand, launcher_at, parse


def torchrun_form(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], TorchrunCommand] | None:
    """For `minify [options] torchrun ...`: minify's own arguments as `minify [options] SCRIPT --
    args` reads them, and the torchrun command; None for any other command line. A torchrun
    command minify cannot run raises TorchrunError (one line)."""
    at = launcher_at(argv)
    if at is None or not _only_options(argv[:at[0]], parser):
        return None
    cmd = parse(argv[at[0] + at[1]:])
    target = ["-m", cmd.target] if cmd.module else [cmd.target]
    return [*argv[:at[0]], *target, "--", *cmd.args], cmd


def _only_options(words: list[str], parser: argparse.ArgumentParser) -> bool:
    """Do these words hold minify's options alone (no script before the launcher)?"""
    try:
        ns, rest = parser.parse_known_args(words)
    except SystemExit:
        return True  # a bad option of minify's: the normal parse says so in one line
    return ns.script is None and ns.module is None and not rest


def apply(ns: argparse.Namespace, opts, cmd: TorchrunCommand) -> None:
    """The Options of a distributed run: torchrun's options travel with the program; a planted
    bug limited to one rank (`--inject rank=R:SPEC`) is checked as SPEC; no early checks (the
    ranks, not one capture, record the graphs)."""
    opts.torchrun = cmd.launcher_options()
    opts.early_checks = False
    ns.inject = [strip_rank(spec) for spec in ns.inject]


def strip_rank(spec: str) -> str:
    """`rank=1:relu:accuracy:double` -> `relu:accuracy:double`; any other spec as it is."""
    return spec[len(RANK_PREFIX):].partition(":")[2] if spec.startswith(RANK_PREFIX) else spec


def print_ranks(opts) -> None:
    """After the run's summary: one line per rank (nothing when the run never got to the job)."""
    program = opts.program
    if program is None:
        return
    for line in rank_lines((opts.out or Path("minify-out") / program.name).resolve()):
        print(line)


def rank_lines(out: Path) -> list[str]:
    """The summary's lines for each rank of the job (report.json's `ranks`)."""
    try:
        report = json.loads((out / "report.json").read_text())
    except (OSError, ValueError):
        return []
    lines = []
    for row in report.get("ranks") or []:
        graphs = f", failing graph(s) {row['failing_graphs']}" if row.get("failing_graphs") else ""
        lines.append(f"rank {row['rank']}: {row['status']}{graphs}" + (f": {row['message'][:160]}"
                                                                      if row.get("message") else ""))
    return lines
