"""report.json keeps to its documented, versioned schema (docs/output-folder.md)."""
import json
import re
import time
from pathlib import Path

from minifier.report.rows import write_report
from minifier.report.schema import FIELDS, SCHEMA_VERSION, off_schema
from minifier.run.stopped import write_stopped

DOC = Path(__file__).resolve().parents[2] / "docs" / "output-folder.md"


def documented() -> dict:
    """The report.json table of docs/output-folder.md: field -> type."""
    section = DOC.read_text().split("## report.json", 1)[1]
    rows = re.findall(r"^\| `(\w+)` \| ([^|]+(?:\\\|[^|]+)*) \|", section, re.M)
    return {name: kind.replace("\\|", "|").strip() for name, kind in rows}


def test_the_documented_fields_are_the_schema():
    assert documented() == FIELDS
    assert f"`schema_version` (now {SCHEMA_VERSION})" in DOC.read_text()


def test_every_report_starts_with_its_schema_version(tmp_path):
    write_report(tmp_path, {"status": "nothing_failed", "graphs": [], "graph_count": 0, "wall_seconds": 1.0})
    report = json.loads((tmp_path / "report.json").read_text())
    assert list(report)[0] == "schema_version" and report["schema_version"] == SCHEMA_VERSION
    assert off_schema(report) == []


def test_a_stopped_run_report_keeps_to_the_schema(tmp_path):
    script = tmp_path / "s.py"
    write_stopped(tmp_path, script, time.perf_counter())
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["schema_version"] == SCHEMA_VERSION and report["status"] == "interrupted"
    assert off_schema(report) == []


def test_a_field_off_the_schema_is_named():
    assert off_schema({"status": "reproduced", "compiles": "3", "surprise": 1, "flaky": 0}) == \
        ["compiles: str", "surprise", "flaky: int"]
