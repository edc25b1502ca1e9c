"""Bugs whose blame names the same part of the compiler: likely one cause with two repros.

Masking a reduced bug and searching again finds every op the bad part reaches: a planted
`neg` bug in transformers' Llama gave `neg` and then `silu` (Inductor writes silu with a neg),
two verified repros, both blamed on neg's lowering. Both stay (each reproduces, and a fix
should pass both); the later one says it shares the earlier one's cause.
"""
from __future__ import annotations

import json

SPECIFIC = ("lowering", "decomposition", "pass")  # findings that name one op or pass, not a layer or a config


def switch_of(finding: dict) -> dict:
    """The switch a blame finding's run turned (what made the repro pass), without its outcome."""
    return {k: v for k, v in (finding.get("run") or {}).items() if k not in ("verdict", "outcome")}


def blamed_part(findings: list[dict]) -> tuple:
    """The parts the findings name: a lowering by its ATen targets (node names differ from repro
    to repro), a decomposition or pass by the switch that made the repro pass; empty when no
    finding names one (a code path, fusion as such, the script's config: many bugs share those)."""
    parts = set()
    for f in findings:
        if f.get("what") not in SPECIFIC:
            continue
        named = sorted(map(str, f["targets"])) if f.get("targets") else json.dumps(switch_of(f), sort_keys=True)
        parts.add((f["what"], str(named)))
    return tuple(sorted(parts))


def mark_shared_causes(rows: list[dict]) -> None:
    """Each bug row whose blame names the same parts as an earlier row's gets `same_cause_as`:
    that row's bug number (from 1)."""
    first: dict[tuple, int] = {}
    for number, row in enumerate(rows, 1):
        part = blamed_part(row.get("blame") or [])
        if not part:
            continue
        if part in first:
            row["same_cause_as"] = first[part]
        else:
            first[part] = number
