"""A finding's stable id: a short hash of what makes it one bug (its signature, the ops to blame,
the dtype, the rung, the kind of failure and whether it is a wrong gradient), never of when, where
or by which shard it was found. The same bug found by two shards, two campaigns or two torch
versions has one id, so records merge and known bugs are recognized by it. Standard library only."""
from __future__ import annotations

import hashlib
import json

ID_FIELDS = ("signature", "suspects", "dtype", "rung", "kind", "gradient")


def finding_id(signature: str, suspects: list[str], dtype: str, rung: str, kind: str,
               gradient: str | None = None) -> str:
    """`f-` and 12 hex digits of the sha256 of the fields above (suspects sorted; the gradient
    counts only as wrong-gradient-or-not, as Masks compares it: grad[x0] and grad[x1] are one bug)."""
    ident = {"signature": signature, "suspects": sorted(suspects), "dtype": dtype or "", "rung": rung or "",
             "kind": kind or "", "gradient": gradient is not None}
    return "f-" + hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:12]


def id_of(failure) -> str:
    """The id of a minifier.fuzz.failures.Failure (or of anything with its fields)."""
    return finding_id(failure.signature, failure.suspects, failure.dtype, failure.rung, failure.kind,
                      failure.gradient)


def id_of_row(row: dict) -> str:
    """The id of a fuzz.json failure row."""
    return finding_id(row["signature"], row["suspects"], row.get("dtype", ""), row.get("rung", ""),
                      row.get("kind", ""), row.get("gradient"))
