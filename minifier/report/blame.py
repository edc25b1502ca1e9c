"""The blame findings as text: a rich table for the terminal, one line each for console
summaries, a list in words for issue.md. What each run switched is said in words
(`without the lowering of neg`), never as the experiment's JSON."""
from __future__ import annotations

from pathlib import Path

from minifier.blame.search import BLAME_FILE

VERDICT_WORDS = {"pass": "passes", "reproduces": "still fails the same way", "other_failure": "fails another way",
                 "invalid": "cannot be judged", "unavailable": "could not be tried", "error": "could not run"}


def _names(value) -> str:
    return "all" if value == "*" else ", ".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)


def switch_words(run: dict) -> str:
    """What a blame run switched, in words: `lowerings off: neg; config cpp.simdlen = 1`."""
    said = [f"{subsystem.replace('_', ' ')} off: {_names(names)}"
            for subsystem, names in (run.get("disable") or {}).items()]
    said += [f"config {key} = {value!r}" for key, value in (run.get("config") or {}).items()]
    apart = run.get("apart")
    if apart:
        said.append("every node its own kernel" if apart == "*" else f"own kernels for {_names(apart)}")
    if run.get("device"):
        said.append(f"on {run['device']}")
    return "; ".join(said) or "nothing switched"


def verdict_words(run: dict) -> str:
    verdict = run.get("verdict", "")
    words = VERDICT_WORDS.get(verdict, verdict)
    return f"{words} ({run['outcome']})" if run.get("outcome") else words


def print_blame(report: dict, console=None) -> None:
    """The findings as a rich table, then the parts ruled out."""
    from rich.table import Table
    from rich.text import Text

    from minifier.report.terminal import wide_console

    console = console or wide_console()
    table = Table(title=Text(f"blame: {report['signature']}"), title_justify="left", show_lines=True,
                  expand=True)
    table.add_column("what", ratio=2, overflow="fold")
    table.add_column("finding", ratio=5, overflow="fold")
    table.add_column("switched", ratio=3, overflow="fold")
    table.add_column("verdict", ratio=2, overflow="fold")
    for f in report["blame"]:
        run = f.get("run") or {}
        table.add_row(Text(f["what"]), Text(f["finding"]), Text(switch_words(run)), Text(verdict_words(run)))
    for r in report["ruled_out"]:
        finding = "ruled out" if r["verdict"] == "reproduces" else "not ruled out: see the verdict"
        table.add_row(*(Text(cell, style="dim") for cell in (r["what"], finding, switch_words(r), verdict_words(r))))
    console.print(table)
    if not report["blame"]:
        console.print("no single switch made the failure go away: no part of the compiler could be blamed")
    console.print(Text(f"{report['compiles']} compiles in {report['seconds']:.1f} s; written to "
                       f"{Path(report['repro']) / BLAME_FILE}"))


def blame_lines(findings: list[dict]) -> list[str]:
    """One plain line per finding (console summaries)."""
    return [f"{f['what']}: {f['finding']}" for f in findings]


def blame_markdown(findings: list[dict]) -> list[str]:
    """The findings for issue.md: one item each, the finding in words and the run that shows it."""
    if not findings:
        return ["No single switch tried (decompositions, passes, fusion, lowerings, code path, config flags) "
                "made the failure go away."]
    return [f"- **{f['what']}**: {f['finding']} (shown by a compile with {switch_words(f.get('run') or {})}, "
            f"which {verdict_words(f.get('run') or {})})" for f in findings]
