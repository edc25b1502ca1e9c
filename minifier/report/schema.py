"""report.json's top-level fields, their JSON types and its version, as documented in
docs/output-folder.md (tests/test_report_schema.py keeps the two equal). Which fields a report
holds depends on how the run ended (`status`); every report holds `schema_version` and `status`.
A change that renames, removes or retypes a field raises SCHEMA_VERSION; a new field does not.
"""
from __future__ import annotations

SCHEMA_VERSION = 1

# field -> JSON type(s), "|"-separated (string, integer, number, boolean, array, object, null)
FIELDS = {
    "schema_version": "integer",
    "status": "string",
    "script": "string",
    "graphs": "array",
    "graph_count": "integer",
    "failing_graphs": "array",
    "script_status": "string|null",
    "bugs": "array",
    "findings": "object",
    "compiles": "integer",
    "cache_hits": "integer",
    "worker_restarts": "integer",
    "reduce_compiles": "integer",
    "invalid_uncompiled": "integer",
    "capture_seconds": "number",
    "wall_seconds": "number",
    "phases": "object",
    "stopped": "string|null",
    "where": "string|null",
    "repros": "array",
    "resume": "string",
    "localization": "array",
    "html": "string",
    "issue": "string",
    "tests": "array",
    "replay": "string",
    "end_to_end": "object",
    "layer": "object",
    "interaction": "object",
    "program": "object",
    "numerics": "object",
    "gpu_health": "object",
    "unsupported": "string",
    "aoti_packages": "array",
    "aoti_replay": "string",
    "aoti_flattened": "array",
    "aoti_package": "integer",
    "reduced_with": "string",
    "versions": "object",
    "versions_by_bug": "object",
    # the first bug's row (one of `bugs`), spread at the top level
    "failing_graph": "integer",
    "also_in_graphs": "array",
    "stage": "string",
    "inductor_bug": "boolean",
    "failure": "object",
    "reproduced": "string",
    "flaky": "boolean",
    "ops_before": "integer",
    "ops_after": "integer",
    "ops": "array",
    "passes": "object",
    "first_divergent": "string|null",
    "divergent_roots": "array",
    "first_divergent_nodes": "array",
    "part": "string",
    "kernels": "array",
    "repro": "string",
    "inputs": "string|null",
    "final_metrics": "array|null",
    "reference": "string|null",
    "graph_code": "string",
    "verified": "boolean|array",
    "verify_line": "string",
    "verify_why": "string",
    "plant": "string",
    "plant_line": "string",
    "seconds_to_repro": "number",
    "blame": "array",
    "blame_error": "string",
    "unverified": "string",
    "same_cause_as": "integer",
    "also_reduced": "array",
}

JSON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list,
              "object": dict, "null": type(None)}


def stamped(report: dict) -> dict:
    """`report` with this schema's version as its first field."""
    return {"schema_version": SCHEMA_VERSION, **{k: v for k, v in report.items() if k != "schema_version"}}


def off_schema(report: dict) -> list[str]:
    """The top-level fields of `report` the schema does not document, or whose value is of
    another type than documented (`name: type`); empty when it keeps to the schema."""
    wrong = []
    for name, value in report.items():
        if name not in FIELDS:
            wrong.append(name)
            continue
        kinds = tuple(JSON_TYPES[t] for t in FIELDS[name].split("|"))
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            wrong.append(f"{name}: {type(value).__name__}")
    return wrong
