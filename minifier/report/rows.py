"""report.json's rows and how it is written: shared by the graph search and the whole-program stage."""
from __future__ import annotations

import json
from pathlib import Path

from minifier.report.cut import cut
from minifier.report.schema import stamped


def write_report(out: Path, report: dict) -> None:
    """report.json, with its schema's version first (minifier/report/schema.py)."""
    (out / "report.json").write_text(json.dumps(stamped(report), indent=1, default=str))


def verdict_kind(g) -> str:
    return ((g.record.get("verdict") or {}).get("kind") or "")


def graph_row(g) -> dict:
    verdict = g.record.get("verdict") or {}
    note = g.record.get("replay_note") or g.record.get("rng_note") or (verdict.get("message") if verdict.get("status") == "invalid" else None) \
        or (cut(verdict.get("message", ""), 160) if verdict.get("kind") == "numerics" else None)
    return {"index": g.index, "key": g.key, "part": g.part, "dynamo_graph": g.dynamo_graph,
            "nodes": g.nodes, "failing": bool(g.failure),
            "kind": (g.failure or {}).get("kind")
            or (verdict.get("kind") if verdict.get("status") == "invalid" else None),
            "message": (g.failure or {}).get("message"), "verdict": verdict.get("status"), "note": note}


def run_status(rows: list[dict]) -> str:
    """"reproduced" when at least one repro verified (or none was asked to, --no-verify): a finding
    whose repro did not verify is reported as such, and never hides a verified one."""
    repros = [r for r in rows if "repro" in r]
    return "reproduced" if any(r.get("verified") is not False for r in repros) else "repro_failed"


def mark_unverified(rows: list[dict], cut_notes: list[str | None]) -> None:
    """Each row without a verified repro gets `unverified`: why (its repro did not reproduce in a
    fresh process, or it was never reduced), and, from `cut_notes` (one per row), when it was found
    only with other ops masked or in a piece cut from the graph (likely an artifact of the cut)."""
    for row, how in zip(rows, cut_notes):
        if row.get("verified") is True or ("repro" in row and row.get("verified") is None):
            continue
        why = (f"its repro did not reproduce in a fresh process ({row.get('verify_line') or 'no verdict'})"
               if "repro" in row else f"not reduced: it reproduced {row.get('reproduced')} of its replays")
        row["unverified"] = why + (f"; found only {how}, so likely an artifact of that cut" if how else "")


def finding_counts(rows: list[dict]) -> dict:
    """How many findings the run reports, how many a verified repro stands behind, how many not."""
    verified = sum(1 for r in rows if r.get("verified") is True)
    unverified = sum(1 for r in rows if "unverified" in r)
    return {"findings": len(rows), "verified": verified, "not_reproduced": unverified}


def findings_line(counts: dict) -> str:
    """`3 findings: 1 verified, 2 not reproduced`."""
    n = counts["findings"]
    line = f"{n} finding{'s' * (n != 1)}: {counts['verified']} verified, {counts['not_reproduced']} not reproduced"
    unchecked = n - counts["verified"] - counts["not_reproduced"]
    return line + (f", {unchecked} not checked (--no-verify)" if unchecked else "")
