"""report.json's rows and how it is written: shared by the graph search and the whole-program stage."""
from __future__ import annotations

import json
from pathlib import Path

from minifier.report.cut import cut


def write_report(out: Path, report: dict) -> None:
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))


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
