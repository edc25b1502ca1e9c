"""`minify [options] torchrun [torchrun options] SCRIPT [args]` (or `python -m torch.distributed.run`):
the same run as `minify SCRIPT`, with the program launched as a torchrun job, every rank recorded
(minifier/distributed/job.py), and the failing rank's graph reduced on one process."""
from __future__ import annotations

import argparse

from compiler.rank_capture import RANK_PREFIX
from minifier.distributed.torchrun_args import TorchrunCommand, TorchrunError, launcher_at, parse


def torchrun_form(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], TorchrunCommand | str | None]:
    """For `minify [options] torchrun ...`: minify's own arguments as `minify [options] SCRIPT --
    args` reads them, and the torchrun command (a str: why minify cannot run it, one line);
    any other command line as it is, with None."""
    at = launcher_at(argv)
    if at is None or not _only_options(argv[:at[0]], parser):
        return argv, None
    try:
        cmd = parse(argv[at[0] + at[1]:])
    except TorchrunError as exc:
        return argv, str(exc)
    target = ["-m", cmd.target] if cmd.module else [cmd.target]
    return [*_rank_specs_checked_plain(argv[:at[0]], cmd), *target, "--", *cmd.args], cmd


def _rank_specs_checked_plain(words: list[str], cmd: TorchrunCommand) -> list[str]:
    """minify's options with each `--inject rank=R:SPEC` as `--inject SPEC` (checked as any spec);
    the rank each one is for is kept in `cmd.rank_specs` (with_torchrun puts it back)."""
    out = []
    for i, word in enumerate(words):
        if i and words[i - 1] == "--inject" and word.startswith(RANK_PREFIX):
            cmd.rank_specs[strip_rank(word)] = word
            word = strip_rank(word)
        out.append(word)
    return out


def _only_options(words: list[str], parser: argparse.ArgumentParser) -> bool:
    """Do these words hold minify's options alone (no script before the launcher)?"""
    try:
        ns, rest = parser.parse_known_args(words)
    except SystemExit:
        return True  # a bad option of minify's: the normal parse says so in one line
    return ns.script is None and ns.module is None and not rest


def with_torchrun(ns: argparse.Namespace, opts, cmd: TorchrunCommand | None):
    """The Options of a distributed run (`opts` as they are for any other): torchrun's options
    travel with the program; a planted bug limited to one rank (`--inject rank=R:SPEC`) is
    planted on rank R alone; no early checks (the ranks, not one capture, record the graphs)."""
    if cmd is not None:
        opts.torchrun = cmd.launcher_options()
        opts.early_checks = False
        opts.injections = [cmd.rank_specs.get(spec, spec) for spec in opts.injections]
    return opts


def strip_rank(spec: str) -> str:
    """`rank=1:relu:accuracy:double` -> `relu:accuracy:double`; any other spec as it is."""
    return spec[len(RANK_PREFIX):].partition(":")[2] if spec.startswith(RANK_PREFIX) else spec


def rank_lines(report: dict) -> list[str]:
    """The summary's line for each rank of a distributed job (report.json's `ranks`)."""
    lines = []
    for row in report.get("ranks") or []:
        graphs = f", failing graph(s) {row['failing_graphs']}" if row.get("failing_graphs") else ""
        message = f": {row['message'][:160]}" if row.get("message") else ""
        lines.append(f"rank {row['rank']}: {row['status']}{graphs}{message}")
    return lines
