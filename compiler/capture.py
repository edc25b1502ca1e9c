"""Run the user's unmodified script and record every graph torch.compile hands to a backend.

This module runs in its own process (`python -m compiler.capture`), so a crash in compiled
code kills the capture, not the tool. It replaces `torch.compile` with a version whose
backend records each Dynamo graph and its real inputs, then compiles with the backend,
mode, options and config the script asked for. Everything is written ahead of the call
that could crash: the graph at compile time, its inputs before its first run, and a marker
naming the graph being called.

A graph that fails to compile or raises at run time falls back to eager so the script goes
on and every later graph is recorded too. At its first call each graph is also checked
against eager on a copy of the same inputs, with the one oracle.
"""
from __future__ import annotations

import argparse
import functools
import json
import os
import runpy
import shutil
import sys
import traceback
from pathlib import Path

import torch

from compiler import config_snapshot, inject
from compiler.graph_code import lift_attributes, module_source
from compiler.stages import CompileSpec
from minifier.oracle import check, clone_inputs
from minifier.signature import exception_signature


class Session:
    def __init__(self, out: Path):
        self.out = out
        self.count = 0
        self.config_before = config_snapshot.snapshot()
        self.marker = out / "calling"

    def graph_dir(self, index: int) -> Path:
        path = self.out / f"graph_{index}"
        path.mkdir(parents=True, exist_ok=True)
        return path


def write_json(path: Path, data: dict) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=1, default=str))
    os.replace(tmp, path)


def _inner_backend(backend, mode, options, dynamic):
    if backend == "inductor":
        return torch._TorchCompileInductorWrapper(mode, options, dynamic)
    if isinstance(backend, str):
        return torch._dynamo.lookup_backend(backend)
    return backend


# Raised by backends on purpose to make Dynamo re-trace; not failures.
_DYNAMO_CONTROL_FLOW = (torch._dynamo.exc.RestartAnalysis, torch._dynamo.exc.SkipFrame)


class RecordingBackend:
    """A Dynamo backend that records, compiles with the user's backend, and checks."""

    def __init__(self, session: Session, backend, mode, options, dynamic, fullgraph):
        self.session = session
        self.inner = _inner_backend(backend, mode, options, dynamic)
        self.custom = not isinstance(backend, str)  # a callable: cannot be rebuilt in another process
        self.backend_name = backend if isinstance(backend, str) else getattr(backend, "__name__", repr(backend))
        self.spec_args = dict(mode=mode, options=options, dynamic=dynamic, fullgraph=fullgraph)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        session = self.session
        index = session.count
        session.count += 1
        folder = session.graph_dir(index)
        config, unreplayable = config_snapshot.changed_since(session.config_before)
        spec = CompileSpec(backend=self.backend_name, config=config, grad_enabled=torch.is_grad_enabled(),
                           **self.spec_args)
        record = {"index": index, "nodes": len(gm.graph.nodes), "spec": spec.to_dict(),
                  "unreplayable_config": unreplayable, "injections": [i.to_dict() for i in inject.active()],
                  "custom_backend": self.custom, "calls": 0, "grad_enabled": torch.is_grad_enabled()}
        eager_gm = gm
        try:
            flat_gm, _ = lift_attributes(gm, [])
            (folder / "graph.py").write_text(module_source(flat_gm))
            eager_gm = torch.fx.GraphModule(gm, gm.graph)  # compiling must not touch what eager runs
        except Exception as exc:  # a graph we cannot replay is still compiled for the script
            record["unsupported"] = f"{type(exc).__name__}: {exc}"
        write_json(folder / "record.json", record)
        try:
            compiled = self.inner(gm, example_inputs)
        except _DYNAMO_CONTROL_FLOW:
            shutil.rmtree(folder, ignore_errors=True)  # Dynamo will trace again: not a graph of its own
            session.count -= 1
            raise
        except Exception as exc:
            kind, sig, msg = exception_signature(exc, "inductor")
            record["failure"] = {"kind": kind, "signature": sig, "message": msg, "when": "compile",
                                 "traceback": traceback.format_exc()[-4000:]}
            _save_inputs(folder, gm, list(example_inputs), record)
            write_json(folder / "record.json", record)
            return eager_gm.forward
        return _wrap(compiled, eager_gm, folder, record, session)


def _save_inputs(folder: Path, gm, inputs: list, record: dict) -> None:
    if (folder / "inputs.pt").exists() or "unsupported" in record:
        return
    try:
        if any(getattr(x, "fake_mode", None) is not None for x in inputs):
            raise ValueError("only fake example inputs are available")
        _, lifted = lift_attributes(gm, clone_inputs(inputs))
        torch.save(lifted, folder / "inputs.pt")
        record["requires_grad"] = [bool(getattr(x, "requires_grad", False)) for x in lifted]
    except Exception as exc:
        record["unsupported"] = f"inputs not saved: {type(exc).__name__}: {exc}"


def _wrap(compiled, eager_gm, folder: Path, record: dict, session: Session):
    """Dynamo calls a backend's result with positional arguments; so does this wrapper."""
    def call(*args):
        record["calls"] += 1
        if record["calls"] == 1:
            _save_inputs(folder, eager_gm, list(args), record)
            session.marker.write_text(str(record["index"]))
            outcome = check(eager_gm, list(args), compiled, stage="inductor")
            record["verdict"] = outcome.__dict__
            if outcome.status == "fail" and outcome.kind != "accuracy":
                record["failure"] = {"kind": outcome.kind, "signature": outcome.signature,
                                     "message": outcome.message, "when": "run"}
            elif outcome.status == "fail":
                record["failure"] = {"kind": "accuracy", "signature": outcome.signature,
                                     "message": outcome.message, "when": "run", "metrics": outcome.metrics}
            write_json(folder / "record.json", record)
        session.marker.write_text(str(record["index"]))
        if "failure" in record and record["failure"]["kind"] != "accuracy":
            return eager_gm(*args)  # keep the script going on eager values
        return compiled(*args)

    return call


def install(session: Session, eager: bool = False) -> None:
    """Replace torch.compile by a recording version (the script sees no other difference),
    or, with `eager`, by one that compiles nothing: the script's own behaviour without the compiler."""
    original = torch.compile

    @functools.wraps(original)
    def recording_compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor",
                          mode=None, options=None, disable=False, **kwargs):
        if eager:
            return (lambda m: m) if model is None else model
        rec = RecordingBackend(session, backend, mode, options, dynamic, fullgraph)
        if model is None:
            return lambda m: original(m, fullgraph=fullgraph, dynamic=dynamic, backend=rec, disable=disable, **kwargs)
        return original(model, fullgraph=fullgraph, dynamic=dynamic, backend=rec, disable=disable, **kwargs)

    torch.compile = recording_compile


def run_script(script: Path, args: list[str], out: Path, eager: bool = False) -> int:
    out.mkdir(parents=True, exist_ok=True)
    session = Session(out)
    install(session, eager)
    result: dict = {"status": "ok"}
    sys.argv = [str(script), *args]
    sys.path.insert(0, str(script.parent))
    try:
        runpy.run_path(str(script), run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        result = {"status": "exit", "code": code}
    except BaseException as exc:
        result = {"status": "error", "type": type(exc).__name__, "message": str(exc)[:2000],
                  "traceback": traceback.format_exc()[-4000:]}
    result["graphs"] = session.count
    result["injections"] = [i.to_dict() for i in inject.active()]
    write_json(out / "script.json", result)
    session.marker.unlink(missing_ok=True)
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m compiler.capture")
    parser.add_argument("script", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--eager", action="store_true", help="run without compiling anything")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args()
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    sys.exit(run_script(ns.script.resolve(), args, ns.out, ns.eager))


if __name__ == "__main__":
    main()
