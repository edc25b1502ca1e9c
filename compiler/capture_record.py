"""The capture's records, typed and versioned: `graph_N/record.json` (one per captured graph) and
`script.json` (how the script's run ended). docs/capture-record.md describes every field.

compiler.capture fills them and writes them (atomically, several times as a graph's first call
goes on); minifier/capture reads them back through `from_dict`, which checks SCHEMA_VERSION
first: a file of another version (an output folder of an older or newer minify) is one
CaptureSchemaError line, never a KeyError deep in the search. Imports no torch: the parent reads
them before it has imported it.
"""
from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path

# Bumped on a change a reader of the old files would misread: a key renamed or removed, a required
# key added, a value whose meaning or form changes (docs/capture-record.md).
SCHEMA_VERSION = 1
SCHEMA_KEY = "schema_version"  # each file carries it under this key; files of an older minify have none (0)


class CaptureSchemaError(ValueError):
    """A capture record this minify cannot read (another version, or a required key missing): one line."""


@dataclass
class CapturedGraph:
    """One captured graph (`graph_N/record.json`): a Dynamo graph or AOTAutograd's backward graph of one."""
    index: int  # N of graph_N: graphs, forward and backward, in the order the capture recorded them
    nodes: int  # nodes in the FX graph as handed to the backend (placeholders and output included)
    spec: dict  # how it was compiled: compiler.stages.CompileSpec.to_dict() (backend, mode, options, config, ...)
    unreplayable_config: list  # names of Inductor config changes that cannot be replayed (callables, ...)
    injections: list  # planted bugs active when it compiled: compiler.inject.Injection.to_dict() each
    custom_backend: bool  # compiled by a callable backend, which another process cannot rebuild
    calls: int  # how many times the script called it (the capture counts on; 0 until its first call)
    grad_enabled: bool  # torch.is_grad_enabled() when Dynamo handed it over (False for a backward graph)
    part: str  # "forward" (a Dynamo graph) or "backward" (AOTAutograd's backward of `dynamo_graph`)
    dynamo_graph: int  # which Dynamo graph (0, 1, ... in the order Dynamo handed them over) it is or belongs to
    key: str  # names it across runs of the script, for `--only`: "3" (Dynamo graph 3) or "3.bw" (its backward)
    context: dict | None = None  # forward only: the modes that were on (inference_mode, autocast, tf32, ...)
    symbolic: bool | None = None  # forward only: Dynamo traced it with symbolic sizes
    forward_index: int | None = None  # backward only: the index of its forward graph's record
    unsupported: str | None = None  # why it cannot be replayed (its form, or its inputs not saved); absent: it can
    requires_grad: list | None = None  # per saved input (inputs.pt), whether it required grad; set once they are saved
    kernels: list | None = None  # Inductor's kernels and the nodes each computes (compiler.kernels); not for symbolic
    verdict: dict | None = None  # the first call's check against eager (compiler.oracle's outcome, all its fields)
    failure: dict | None = None  # kind, signature, message, when ("compile"/"run"), and traceback/rung/metrics
    collectives: list | dict | None = None  # functional collectives taken out (wait, op, args each), or {"error"}
    collective_bug: bool | None = None  # it failed, and passes checked alone without its collectives
    user_op_faults: list | None = None  # it failed, and its custom op is defined wrongly (opcheck: schema, fake; sentences)
    alone_verdict: dict | None = None  # the check of the graph without its collectives (collective_bug's evidence)

    def to_dict(self) -> dict:
        return _to_dict(self)

    @classmethod
    def from_dict(cls, data: dict, source: str = "record.json") -> CapturedGraph:
        return _from_dict(cls, data, source)


@dataclass
class ScriptEnding:
    """How the script's run under the capture ended (`script.json`), written when it ends by itself."""
    status: str  # "ok" (ran to its end), "exit" (sys.exit), "error" (raised); crash and hang leave no file
    graphs: int  # graph records written (forward and backward)
    dynamo_graphs: int  # graphs Dynamo handed to the backend
    callables: int  # torch.compile'd callables the script made (calls/N.pt holds each one's first outputs)
    dynamo_disabled: bool  # torch._dynamo.config.disable was set (by the script or TORCH_COMPILE_DISABLE)
    injections: list  # planted bugs active at the end (Injection.to_dict() each)
    code: int | None = None  # "exit" only: the exit status
    type: str | None = None  # "error" only: the exception's class name
    message: str | None = None  # "error" only: its message (cut at 2000 characters; a hint added for EOFError)
    traceback: str | None = None  # "error" only: its traceback (head and tail kept when long)

    def to_dict(self) -> dict:
        return _to_dict(self)

    @classmethod
    def from_dict(cls, data: dict, source: str = "script.json") -> ScriptEnding:
        return _from_dict(cls, data, source)


def _to_dict(record) -> dict:
    """The version first, then every field that has a value: an optional field never set is no key
    (readers ask `"failure" in record`), as before the schema was written down."""
    data: dict = {SCHEMA_KEY: SCHEMA_VERSION}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if value is not None or _required(f):
            data[f.name] = value
    return data


def _required(f: dataclasses.Field) -> bool:
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _from_dict(cls, data: dict, source: str):
    """`cls` from a file's dict: its version checked first, then its required keys; keys this
    version does not know are left out."""
    version = data.get(SCHEMA_KEY, 0) if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        written = "0 (before records were versioned)" if version == 0 else \
            str(version) if isinstance(version, int) else "unknown"
        raise CaptureSchemaError(f"{source} was written by a minify of capture schema {written}; this one reads "
                                 f"{SCHEMA_VERSION}: run again into a new folder")
    fields = dataclasses.fields(cls)
    missing = [f.name for f in fields if _required(f) and f.name not in data]
    if missing:
        raise CaptureSchemaError(f"{source} lacks the required key(s) {', '.join(missing)} of capture schema "
                                 f"{SCHEMA_VERSION}: it was not written whole by a minify; run again into a new folder")
    return cls(**{f.name: data[f.name] for f in fields if f.name in data})


def read(cls, path: Path):
    """`cls` (CapturedGraph or ScriptEnding) from the file at `path`; OSError and json's ValueError as they come."""
    return cls.from_dict(json.loads(path.read_text()), str(path))


def write_json(path: Path, data) -> None:
    """`data` as JSON at `path`, whole or not at all (a reader may look while the script runs)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    os.replace(tmp, path)
