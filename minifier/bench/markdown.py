"""`minify bench --markdown`: the README's table, with the run it came from named above it.

One header line (date, commit, machine, torch, how the built-in ran) and one row a case: minify's
wall time and compiles, the built-in's time and answer (or why it failed), and their ratio. The
same fields go into the bench JSON (`run_facts`), so a table can be traced to its run.
"""
from __future__ import annotations

import datetime
import os
import platform
import subprocess

from minifier.bench.cases import ROOT
from minifier.bench.score import Row


def _commit() -> str:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + ("+changes" if head and dirty else "")


def _machine(devices: list[str]) -> str:
    import torch

    cores = f"{os.cpu_count()} CPU cores"
    if "cuda" in devices and torch.cuda.is_available():
        return f"{torch.cuda.get_device_name()}, {cores}"
    return f"{platform.machine()} CPU, {cores}"


def run_facts(devices: list[str]) -> dict:
    """What a table's numbers depend on: when, which code, which machine, which torch."""
    import torch

    return {"date": datetime.date.today().isoformat(), "commit": _commit(), "machine": _machine(devices),
            "torch": torch.__version__}


def builtin_answer(b: dict) -> str:
    """The built-in's answer in a table cell: what its repro holds, or why it failed."""
    if not b:
        return "-"
    if b.get("outcome") == "ok":
        ops = b.get("ops_after")
        what = "one op" if ops == 1 else f"{ops} ops" if ops is not None else "a repro"
        if b.get("reproduces") is False:
            what += ", repro.py passes"
        return f"{what} ({b.get('queries')} queries)"
    return f"fails: \"{(b.get('failure') or b.get('outcome') or '').replace('|', '/')}\""


def markdown(rows: list[Row], facts: dict, vs_builtin: bool, flags: str) -> str:
    """The header line and the table, as the README holds them."""
    head = (f"minify bench, {facts['date']}, commit {facts['commit']}, {facts['machine']}, torch {facts['torch']}"
            + (f", built-in run as `{flags}`" if vs_builtin else ""))
    lines = [head, ""]
    if vs_builtin:
        lines += ["| case | minify | compiles | built-in | built-in's answer | minify / built-in |",
                  "|---|---|---|---|---|---|"]
    else:
        lines += ["| case | minify | compiles | answer |", "|---|---|---|---|"]
    for r in rows:
        got = "right" if r.correct else (r.note or "wrong")
        minify = f"{r.wall} s" if r.wall is not None else "-"
        if not vs_builtin:
            lines.append(f"| {r.name} | {minify} | {r.compiles if r.compiles is not None else '-'} | {got} |")
            continue
        b = r.builtin or {}
        ratio = f"{r.wall / b['seconds']:.2f}x" if b.get("seconds") and r.wall else "-"
        name = r.name if r.correct else f"{r.name} (minify: {got})"
        lines.append(f"| {name} | {minify} | {r.compiles if r.compiles is not None else '-'} | "
                     f"{str(b.get('seconds', '-')) + ' s' if b.get('seconds') else '-'} | {builtin_answer(b)} | {ratio} |")
    return "\n".join(lines)
