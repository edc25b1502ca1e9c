"""The versions table on the terminal, and the window in the repro's issue.md and report.json
(the section and the key are replaced on each run, nothing else in either file is touched)."""
from __future__ import annotations

import json
from pathlib import Path

from minifier.versions.run import VersionRun
from minifier.versions.window import Window, ordered

SECTION = "### Regression window (minify versions)"


def table(rows: list[VersionRun]) -> str:
    """Fixed-width rows: version, outcome, time, why."""
    lines = [f"{'torch':<14} {'outcome':<18} {'time':>7}  why"]
    for r in ordered(rows):
        lines.append(f"{(r.torch or r.spec):<14} {r.outcome:<18} {r.seconds:>6.1f}s  {r.why}")
    return "\n".join(lines)


def markdown(rows: list[VersionRun], found: Window) -> str:
    body = ["| torch | outcome | time | why |", "| --- | --- | --- | --- |"]
    body += [f"| {r.torch or r.spec} | {r.outcome} | {r.seconds:.1f} s | {r.why.replace('|', '/')} |"
             for r in ordered(rows)]
    return "\n".join([SECTION, "", f"**{found.text}**", "", *body,
                      "", "(`minify versions`: repro.py run under each torch in a fresh process.)"])


def write_issue(folder: Path, rows: list[VersionRun], found: Window) -> Path | None:
    """Put the section into issue.md before `### Versions` (or at its end), replacing an old one."""
    path = folder / "issue.md"
    if not path.is_file():
        return None
    text = path.read_text()
    if SECTION in text:  # the old section runs to the next heading
        head, rest = text.split(SECTION, 1)
        nxt = rest.find("\n### ")
        text = head.rstrip("\n") + "\n\n" + (rest[nxt + 1:] if nxt >= 0 else "")
    section = markdown(rows, found) + "\n\n"
    at = text.find("### Versions")
    text = text[:at] + section + text[at:] if at >= 0 else text.rstrip("\n") + "\n\n" + section
    path.write_text(text)
    return path


def write_report(folder: Path, rows: list[VersionRun], found: Window) -> Path | None:
    """report.json's "versions" key: the repro folder's report.json, or its run's (a bug-N folder)."""
    for path in (folder / "report.json", folder.parent / "report.json"):
        if path.is_file():
            break
    else:
        return None
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    entry = {"repro": folder.name, "window": found.to_dict(), "runs": [r.to_dict() for r in ordered(rows)]}
    if path.parent == folder:
        report["versions"] = entry
    else:
        report.setdefault("versions_by_bug", {})[folder.name] = entry
    path.write_text(json.dumps(report, indent=1, default=str))
    return path
