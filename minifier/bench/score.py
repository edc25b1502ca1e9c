"""One case's answer scored against its manifest entry, and the totals of a bench run.

A planted case is right when minify's report names the right graph, stage and kind, keeps the
culprit op in a verified repro. A foreign program (kind `none`) is right when minify exits 3 and
says nothing failed, with no traceback on its console, over as many Dynamo graphs as the manifest
counts; it has no repro, so the repro columns do not apply to it."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from minifier.bench.cases import expects_nothing_failed
from minifier.exit_codes import EXIT_NOTHING_FAILED

NOTHING_FAILED_LINE = "Nothing failed"


@dataclass
class Row:
    """One case's score (minify), and the built-in's where asked for."""

    name: str
    kind: str
    note: str = ""
    exit_code: int | None = None
    status: str | None = None
    graph_ok: bool | None = None
    stage_ok: bool | None = None
    kind_ok: bool | None = None
    culprit_ok: bool | None = None
    verified: bool | None = None
    ops_after: int | None = None
    min_ops: int | None = None
    ops: list = field(default_factory=list)
    compiles: int | None = None
    wall: float | None = None
    to_repro: float | None = None  # script start to the first verified repro (before blame)
    report: str | None = None
    builtin: dict | None = None
    expected: str = "repro"  # the manifest's answer: a verified repro, or (kind `none`) nothing fails
    said_nothing_failed: bool | None = None  # kind `none`: the console's "Nothing failed" line
    traceback: bool | None = None  # kind `none`: a Traceback reached the console

    @property
    def nothing_expected(self) -> bool:
        return self.kind == "none"

    @property
    def correct(self) -> bool:
        if self.nothing_expected:
            return bool(self.exit_code == EXIT_NOTHING_FAILED and self.said_nothing_failed and not self.traceback
                        and self.graph_ok is not False)
        return bool(self.graph_ok and self.stage_ok and self.kind_ok and self.culprit_ok and self.verified)


def score(case: dict, code: int | None, seconds: float, out: Path, console: str = "") -> Row:
    """`console`: what minify printed (stdout and stderr), read for a foreign program's answer."""
    if expects_nothing_failed(case):
        return score_nothing_failed(case, code, seconds, out, console)
    row = Row(case["name"], case["kind"], exit_code=code, wall=round(seconds, 1), min_ops=case.get("min_ops"))
    report_path = out / "report.json"
    if code is None:
        row.note = "timed out"
        return row
    if not report_path.exists():
        row.note = f"no report (exit {code})"
        return row
    report = json.loads(report_path.read_text())
    row.report = str(report_path)
    row.status = report.get("status")
    if row.status == "nothing_failed":
        row.note = "nothing failed" + (" (expected: the bug is in the backward graph)"
                                       if "backward" in case.get("tags", []) else "")
        return row
    failure = report.get("failure") or {}
    row.graph_ok = failing_dynamo_graph(report) == case["graph_index"] and dynamo_graph_count(report) == case["graphs"]
    row.stage_ok = report.get("stage") == case["stage"]
    row.kind_ok = failure.get("kind") == case["kind"]
    row.ops = report.get("ops") or []
    all_ops = set(row.ops) | {op for bug in report.get("bugs", []) for op in bug.get("ops", [])}
    row.culprit_ok = bool(set(case["culprit_ops"]) & set(row.ops)) if row.ops else bool(
        set(case["culprit_ops"]) & all_ops)
    row.verified = report.get("verified")
    row.ops_after = report.get("ops_after")
    row.compiles = report.get("compiles")
    row.to_repro = report.get("seconds_to_repro")
    return row


def score_nothing_failed(case: dict, code: int | None, seconds: float, out: Path, console: str) -> Row:
    """A foreign program: exit 3, "Nothing failed" said, no traceback, the Dynamo graphs counted."""
    row = Row(case["name"], case["kind"], exit_code=code, wall=round(seconds, 1), expected="nothing fails")
    if code is None:
        row.note = "timed out"
        return row
    row.said_nothing_failed = NOTHING_FAILED_LINE in console
    row.traceback = "Traceback" in console
    report_path = out / "report.json"
    if report_path.exists():
        report = json.loads(report_path.read_text())
        row.report, row.status, row.compiles = str(report_path), report.get("status"), report.get("compiles")
        count = dynamo_graph_count(report)
        row.graph_ok = None if count is None or "graphs" not in case else count == case["graphs"]
    if not row.correct:
        row.note = (f"exit {code}" + (", a Traceback on the console" if row.traceback else "")
                    + ("" if row.said_nothing_failed else ", no 'Nothing failed' line")
                    + (", graph count differs" if row.graph_ok is False else ""))
    return row


def dynamo_graph_count(report: dict) -> int | None:
    """Graphs Dynamo produced (the report may also list the backward graph of each)."""
    rows = report.get("graphs") or []
    return sum(g.get("part", "forward") == "forward" for g in rows) if rows else report.get("graph_count")


def failing_dynamo_graph(report: dict) -> int | None:
    """The Dynamo graph of the failing graph record (a backward record counts as its forward graph)."""
    index = report.get("failing_graph")
    row = next((g for g in report.get("graphs") or [] if g.get("index") == index), None)
    return row.get("dynamo_graph", index) if row else index


def expected_miss(r: Row) -> bool:
    """Not scored: skipped here (needs CUDA), or a miss the manifest expects (a backward-graph bug)."""
    return r.note.startswith("skipped") or "backward" in r.note


def summary(rows: list[Row]) -> dict:
    """Totals; the per-column counts are over planted cases, `correct`/`scored` over all scored rows.
    A planted case that timed out or left no report is scored, as wrong; only a case skipped (no
    CUDA here) or one whose miss is expected (a bug in a backward graph) is not."""
    scored = [r for r in rows if not r.nothing_expected and not expected_miss(r)]
    programs = [r for r in rows if r.nothing_expected and not r.note.startswith("skipped")]
    walls = sorted(r.wall for r in rows if r.wall is not None)
    out = {"cases": len(rows), "scored": len(scored) + len(programs),
           "correct": sum(r.correct for r in scored) + sum(r.correct for r in programs),
           **{k: sum(bool(getattr(r, k)) for r in scored) for k in ("graph_ok", "stage_ok", "kind_ok", "culprit_ok",
                                                                      "verified")},
           "at_min_ops": sum(r.ops_after is not None and r.ops_after <= r.min_ops for r in scored),
           "programs": len(programs), "programs_correct": sum(r.correct for r in programs),
           "total_wall": round(sum(walls), 1), "median_wall": walls[len(walls) // 2] if walls else None,
           "total_compiles": sum(r.compiles or 0 for r in scored)}
    built = [r.builtin for r in rows if r.builtin and r.builtin.get("seconds")]
    if built:
        out["builtin_total_wall"] = round(sum(b["seconds"] for b in built), 1)
    return out
