"""`minify fuzz merge`, `minify fuzz recheck` and `minify fuzz --cluster`: the commands around a
campaign that outgrows one process (dispatched from minifier.fuzz.command's main)."""
from __future__ import annotations


def findings_line(summary: dict) -> str:
    """`2 new, 1 still failing (seen before), 1 masked as a known issue; record: findings.json`."""
    parts = [f"{len(summary['new'])} new: {', '.join(summary['new'])}" if summary["new"] else "0 new",
             f"{len(summary['still_failing'])} still failing (seen before)"]
    if summary["known_issue"]:
        parts.append(f"{len(summary['known_issue'])} known issue(s)")
    return "findings: " + "; ".join(parts) + " (ids and records in findings.json)"


def main(argv: list[str], command: tuple) -> int:
    """`command`: (parser, options, validate) of minifier.fuzz.command."""
    from minifier.report.terminal import error_console, wide_console

    console, errors = wide_console(), error_console()
    if argv[0] == "merge":
        from minifier.fuzz.merge import main as merge_main
        return merge_main(argv[1:], console, errors)
    if argv[0] == "recheck":
        from minifier.fuzz.recheck import main as recheck_main
        return recheck_main(argv[1:], console, errors)
    from minifier.fuzz.cluster import main as cluster_main
    return cluster_main(argv, command, console, errors)
