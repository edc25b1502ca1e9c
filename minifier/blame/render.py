"""The blame findings as text: a rich table for the terminal, one line each for console
summaries, a markdown table for issue.md."""
from __future__ import annotations

import json
from pathlib import Path

from minifier.blame.search import BLAME_FILE


def print_blame(report: dict, console=None) -> None:
    """The findings as a rich table, then the parts ruled out."""
    from rich.console import Console
    from rich.table import Table

    console = console or Console()
    table = Table(title=f"blame: {report['signature']}", title_justify="left", show_lines=True)
    table.add_column("what", no_wrap=True)
    table.add_column("finding", ratio=3, overflow="fold")
    table.add_column("run", ratio=2, overflow="fold")
    table.add_column("verdict", no_wrap=True)
    for f in report["blame"]:
        run = dict(f.get("run") or {})
        verdict = run.pop("verdict", "")
        run.pop("outcome", None)
        table.add_row(f["what"], f["finding"], json.dumps(run) if run else "", verdict)
    for r in report["ruled_out"]:
        switch = {k: v for k, v in r.items() if k not in ("what", "verdict", "outcome")}
        table.add_row(f"[dim]{r['what']}[/dim]", "[dim]ruled out: still fails[/dim]" if r["verdict"] == "reproduces"
                      else f"[dim]{r['verdict']}: {r.get('outcome', '')}[/dim]", f"[dim]{json.dumps(switch)}[/dim]",
                      f"[dim]{r['verdict']}[/dim]")
    console.print(table)
    if not report["blame"]:
        console.print("no single switch made the failure go away: no part of the compiler could be blamed")
    console.print(f"{report['compiles']} compiles in {report['seconds']:.1f} s; written to "
                  f"{Path(report['repro']) / BLAME_FILE}", highlight=False)


def blame_lines(findings: list[dict]) -> list[str]:
    """One plain line per finding (console summaries)."""
    return [f"{f['what']}: {f['finding']}" for f in findings]


def blame_markdown(findings: list[dict]) -> list[str]:
    """The findings as a markdown table (issue.md): what, finding, the run that shows it."""
    if not findings:
        return ["No single switch tried (decompositions, passes, fusion, lowerings, code path, config flags) "
                "made the failure go away."]
    lines = ["| what | finding | run | verdict |", "|---|---|---|---|"]
    for f in findings:
        run = dict(f.get("run") or {})
        verdict = run.pop("verdict", "")
        run.pop("outcome", None)
        cells = [f["what"], f["finding"], f"`{json.dumps(run)}`" if run else "", verdict]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return lines
