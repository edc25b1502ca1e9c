"""The capture's records (graph_N/record.json, script.json) keep to their documented, versioned
schema (compiler/capture_record.py, docs/capture-record.md), and a folder of another minify's
is one clear line, not a KeyError deep in the search."""
import dataclasses
import json
import re
from pathlib import Path

import pytest

from compiler.capture_record import (SCHEMA_KEY, SCHEMA_VERSION, CaptureSchemaError, CapturedGraph, ScriptEnding,
                                     write_json)
from minifier.capture.process import _read_capture

DOC = Path(__file__).resolve().parents[2] / "docs" / "capture-record.md"

FORWARD = CapturedGraph(index=0, nodes=7, spec={"backend": "inductor", "mode": None}, unreplayable_config=[],
                        injections=[{"kind": "lowering", "target": "aten.relu"}], custom_backend=False, calls=1,
                        grad_enabled=True, part="forward", dynamo_graph=0, key="0", context={}, symbolic=False,
                        requires_grad=[True, False], failure={"kind": "accuracy", "signature": "accuracy:x"})
BACKWARD = CapturedGraph(index=1, nodes=5, spec={"backend": "inductor", "grad_enabled": False}, unreplayable_config=[],
                         injections=[], custom_backend=False, calls=0, grad_enabled=False, part="backward",
                         dynamo_graph=0, key="0.bw", forward_index=0, unsupported="inputs not saved: x")
ERROR = ScriptEnding(status="error", graphs=2, dynamo_graphs=1, callables=1, dynamo_disabled=False, injections=[],
                     type="RuntimeError", message="boom", traceback="Traceback ...")


@pytest.mark.parametrize("record", [FORWARD, BACKWARD, ERROR], ids=["forward", "backward", "script"])
def test_a_record_round_trips_through_its_file_form(tmp_path, record):
    write_json(tmp_path / "r.json", record.to_dict())
    data = json.loads((tmp_path / "r.json").read_text())
    assert data[SCHEMA_KEY] == SCHEMA_VERSION
    assert type(record).from_dict(data) == record
    unset = [f.name for f in dataclasses.fields(record) if getattr(record, f.name) is None]
    assert unset and not set(unset) & set(data)  # an optional field never set is no key (readers ask `in`)


def test_keys_this_version_does_not_know_are_left_out():
    data = {**ERROR.to_dict(), "added_by_a_later_minor_change": 3}
    assert ScriptEnding.from_dict(data) == ERROR


@pytest.mark.parametrize("version,said", [(None, "0 (before records were versioned)"), (SCHEMA_VERSION + 1,
                                                                                          str(SCHEMA_VERSION + 1))])
def test_a_record_of_another_version_is_one_clear_line(version, said):
    data = {k: v for k, v in FORWARD.to_dict().items() if k != SCHEMA_KEY}
    if version is not None:
        data[SCHEMA_KEY] = version
    with pytest.raises(CaptureSchemaError) as caught:
        CapturedGraph.from_dict(data, "work/capture/graph_0/record.json")
    assert str(caught.value) == (f"work/capture/graph_0/record.json was written by a minify of capture schema {said}; "
                                 f"this one reads {SCHEMA_VERSION}: run again into a new folder")


def test_a_record_missing_a_required_key_names_it():
    data = {k: v for k, v in ERROR.to_dict().items() if k not in ("graphs", "callables")}
    with pytest.raises(CaptureSchemaError) as caught:
        ScriptEnding.from_dict(data, "out/script.json")
    line = str(caught.value)
    assert line.startswith("out/script.json lacks the required key(s) graphs, callables") and "\n" not in line


def test_the_reader_reads_through_the_schema_and_refuses_an_older_folder(tmp_path):
    """_read_capture: a current folder gives the records as dicts (failure, injections carried);
    one graph folder left by an older minify (no version) is the clear line, naming its file."""
    for record in (FORWARD, BACKWARD):
        (tmp_path / f"graph_{record.index}").mkdir()
        write_json(tmp_path / f"graph_{record.index}" / "record.json", record.to_dict())
    write_json(tmp_path / "script.json", ERROR.to_dict())
    capture = _read_capture(tmp_path, 0, 1.0, 60.0)
    assert [g.key for g in capture.graphs] == ["0", "0.bw"] and capture.graphs[0].failure == FORWARD.failure
    assert capture.script == ERROR.to_dict() and capture.injections == FORWARD.injections
    old = {k: v for k, v in FORWARD.to_dict().items() if k != SCHEMA_KEY} | {"index": 2}
    (tmp_path / "graph_2").mkdir()
    (tmp_path / "graph_2" / "record.json").write_text(json.dumps(old))
    with pytest.raises(CaptureSchemaError, match=re.escape(f"{tmp_path / 'graph_2' / 'record.json'} was written by "
                                                           f"a minify of capture schema 0")):
        _read_capture(tmp_path, 0, 1.0, 60.0)


def documented(title: str) -> list[str]:
    """The field names of one table of docs/capture-record.md, in order."""
    section = DOC.read_text().split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `(\w+)` \|", section, re.M)


def test_the_documented_fields_are_the_schema():
    assert documented("graph_N/record.json") == [SCHEMA_KEY] + [f.name for f in dataclasses.fields(CapturedGraph)]
    assert documented("script.json") == [SCHEMA_KEY] + [f.name for f in dataclasses.fields(ScriptEnding)]
    assert f"`{SCHEMA_KEY}` (now {SCHEMA_VERSION})" in DOC.read_text()
