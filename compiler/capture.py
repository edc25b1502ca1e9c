"""Run the user's unmodified script and record every graph torch.compile hands to a backend.

This module runs in its own process (`python -m compiler.capture`), so a crash in compiled
code kills the capture, not the tool. It replaces `torch.compile` with a version whose
backend records each Dynamo graph and its real inputs, then compiles with the backend,
mode, options and config the script asked for. Everything is written ahead of the call
that could crash: the graph and its inputs when Dynamo hands them over (before the compile),
and a marker naming the graph being called.

A graph that fails to compile or raises at run time falls back to eager so the script goes
on and every later graph is recorded too. At its first call each graph is also checked
against eager on a copy of the same inputs, with the one oracle.
"""
from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import shutil
import sys
import traceback
from pathlib import Path

import torch

from compiler import (aoti_capture, aoti_control, collective_record, config_snapshot, cudagraphs, custom_ops, inject,
                      kernels, launch_form, settings)
from compiler.call_checks import check_call, check_later_call
from compiler.call_outputs import record_first_call
from compiler.capture_record import CapturedGraph, ScriptEnding, write_json
from compiler.crash_trace import CAPTURE_MARKS, kernel_marks
from compiler.graph_code import check_round_trip, lift_attributes, module_source, unreplayable_form
from compiler.launch_form import Launch
from compiler.inductor_hook import HookedInductor, boxed, copy_graph, disable_aot_cache, eager_module, wrap_compiled
from compiler.origins import node_origins, seq_nr_sources
from compiler.stages import CompileSpec
from compiler.judging import Judging
from compiler.oracle import clone_inputs, judged_check
from compiler.quick_exit import quick_exit
from compiler.signature import exception_signature
from compiler.saved_inputs import save_inputs, symbolic_inputs
from compiler.context import current_context, input_device_type


class Session:
    def __init__(self, out: Path, only: set[str] | None = None, judging: Judging = Judging()):
        self.out = out
        self.judging = judging  # how the run judges outputs: the user's tolerances, --strict, --ignore
        self.count = 0  # graph records, forward and backward, in compile order
        self.dynamo_count = 0  # graphs Dynamo handed to the backend: graph k has key "k"
        self.callables = 0  # torch.compile'd callables, in the order the script made them
        self.only = only  # subset run: compile only graphs with these keys, record nothing
        self.forward_index: dict[int, int] = {}  # Dynamo graph -> index of its record
        self.forward_rows: dict[int, dict] = {}  # Dynamo graph -> node name -> nodes.json row
        self.seq_sources: dict[int, dict] = {}  # Dynamo graph -> autograd seq_nr -> Dynamo node name
        self.config_before = config_snapshot.snapshot()
        self.marker = out / "calling"
        self.backends: dict[tuple, RecordingBackend] = {}  # one per distinct compile settings

    def graph_dir(self, index: int) -> Path:
        path = self.out / f"graph_{index}"
        path.mkdir(parents=True, exist_ok=True)
        return path

    def new_graph(self) -> tuple[int, Path]:
        index = self.count
        self.count += 1
        return index, self.graph_dir(index)

    def rollback(self, count: int, dynamo_count: int) -> None:
        """Forget graphs recorded since (Dynamo restarts its analysis: they are not graphs)."""
        for index in range(count, self.count):
            shutil.rmtree(self.out / f"graph_{index}", ignore_errors=True)
        self.count, self.dynamo_count = count, dynamo_count


def _inner_backend(backend, mode, options, dynamic):
    if backend == "inductor":
        return HookedInductor(mode, options, dynamic)
    if isinstance(backend, str):
        return torch._dynamo.lookup_backend(backend)
    return backend


# Raised by backends on purpose to make Dynamo re-trace; not failures.
_DYNAMO_CONTROL_FLOW = (torch._dynamo.exc.RestartAnalysis, torch._dynamo.exc.SkipFrame)


def shared_backend(session: Session, backend, mode, options, dynamic, fullgraph) -> "RecordingBackend":
    """The recording backend for these settings, made once: two torch.compile calls with the
    same settings must share Dynamo's cache and guards as they do in a normal run (a new backend
    object per call would make Dynamo compile afresh, and hide a bug in what it reuses)."""
    key = (backend if isinstance(backend, str) else id(backend), mode, repr(options), dynamic, fullgraph)
    if key not in session.backends:
        session.backends[key] = RecordingBackend(session, backend, mode, options, dynamic, fullgraph)
    return session.backends[key]


class RecordingBackend:
    """A Dynamo backend that records, compiles with the user's backend, and checks.

    Under Inductor it also records each backward graph AOTAutograd compiles (lazily, at the
    first backward call) as a graph of its own. In a subset run (`session.only`) it records
    nothing and compiles only the graphs named there; the others run eagerly."""

    def __init__(self, session: Session, backend, mode, options, dynamic, fullgraph):
        self.session = session
        self.inner = _inner_backend(backend, mode, options, dynamic)
        self.custom = not isinstance(backend, str)  # a callable: cannot be rebuilt in another process
        self.backend_name = backend if isinstance(backend, str) else getattr(backend, "__name__", repr(backend))
        self.spec_args = dict(mode=mode, options=options, dynamic=dynamic, fullgraph=fullgraph)

    def __call__(self, gm: torch.fx.GraphModule, example_inputs):
        session = self.session
        before = (session.count, session.dynamo_count)
        key = session.dynamo_count
        session.dynamo_count += 1
        try:
            if session.only is not None:
                return self._compile_selected(key, gm, example_inputs)
            return self._record(key, gm, example_inputs)
        except _DYNAMO_CONTROL_FLOW:
            session.rollback(*before)  # Dynamo will trace again: not a graph of its own
            raise

    def _record(self, key: int, gm: torch.fx.GraphModule, example_inputs):
        session = self.session
        index, folder = session.new_graph()
        session.forward_index[key] = index
        config, unreplayable = config_snapshot.changed_since(session.config_before)
        spec = CompileSpec(backend=self.backend_name, config=config, grad_enabled=torch.is_grad_enabled(),
                           **self.spec_args)
        record = CapturedGraph(index=index, nodes=len(gm.graph.nodes), spec=spec.to_dict(),
                               unreplayable_config=unreplayable, injections=[i.to_dict() for i in inject.active()],
                               custom_backend=self.custom, calls=0, grad_enabled=torch.is_grad_enabled(),
                               part="forward", dynamo_graph=key, key=str(key),
                               context=current_context(input_device_type(example_inputs)), symbolic=symbolic_inputs(gm))
        eager_gm = gm
        try:
            session.forward_rows[key] = {row["name"]: row for row in _write_graph(folder, gm)}
            eager_gm = torch.fx.GraphModule(gm, gm.graph)  # compiling must not touch what eager runs
        except Exception as exc:  # a graph we cannot replay is still compiled for the script
            record.unsupported = _unsupported(exc)
        if record.unsupported is None:  # the next call's inputs before the compile (seconds): checks start meanwhile
            saved = dataclasses.replace(record)  # where they cannot be saved yet (fake, a size with no value),
            save_inputs(folder, gm, list(example_inputs), saved)  # the first call does: not unsupported
            record.requires_grad = saved.requires_grad
        write_json(folder / "record.json", record.to_dict())
        try:
            compiled = self._compile(key, gm, example_inputs, record)
        except _DYNAMO_CONTROL_FLOW:
            raise
        except Exception as exc:
            kind, sig, msg = exception_signature(exc, "inductor")
            if kind == "runtime_error":  # raised while compiling: replayed, Dynamo wraps it as a compile error
                kind, sig = "compile_error", "compile_error" + sig[len("runtime_error"):]
            record.failure = {"kind": kind, "signature": sig, "message": msg, "when": "compile",
                              "traceback": traceback.format_exc()[-4000:]}
            record.user_op_faults = custom_ops.definition_faults(eager_gm, list(example_inputs)) or None
            save_inputs(folder, gm, list(example_inputs), record)
            write_json(folder / "record.json", record.to_dict())
            collective = collective_record.has_collectives(eager_gm)  # its first eager call records them
            return _wrap(None, eager_gm, folder, record, session) if collective else eager_gm.forward
        return _wrap(compiled, eager_gm, folder, record, session)

    def _compile(self, key: int, gm, example_inputs, record: CapturedGraph | None):
        if isinstance(self.inner, HookedInductor):
            return self.inner.compile(gm, example_inputs, functools.partial(self._on_aot_graph, key, record))
        return self.inner(gm, example_inputs)

    def _compile_selected(self, key: int, gm, example_inputs):
        only = self.session.only
        if str(key) in only or f"{key}.bw" in only:
            return self._compile(key, gm, example_inputs, None)
        return gm.forward

    def _on_aot_graph(self, key: int, forward_record: CapturedGraph | None, aten_gm, example_inputs, is_backward: bool,
                      compile):
        """Inductor's hook for one AOT graph of Dynamo graph `key`."""
        if self.session.only is not None:
            selected = (f"{key}.bw" if is_backward else str(key)) in self.session.only
            return compile() if selected else boxed(aten_gm)
        if forward_record is None:
            return compile()
        if not is_backward:
            self.session.seq_sources[key] = seq_nr_sources(aten_gm)
            return _compile_recording_kernels(compile, forward_record)
        return _record_backward(self.session, key, forward_record, aten_gm, compile)


def _compile_recording_kernels(compile, record: CapturedGraph):
    """Compile, keeping Inductor's kernels and the nodes each computes in the graph's record:
    the divergence search reads which values are stored anyway from them, and would otherwise
    generate the graph's code again in a worker. Not kept for symbolic sizes: the replay's
    kernels are made for the numbers of one call."""
    with kernels.recorded_kernels() as found:
        compiled = compile()
    if found and not record.symbolic:
        record.kernels = [k.to_dict() for k in found]
    return compiled


def _write_graph(folder: Path, gm: torch.fx.GraphModule, by_seq_nr: dict | None = None) -> list[dict]:
    """Write the graph's source and node rows; ValueError where it cannot be replayed as a graph (it is then
    `unsupported`, and the program is reduced instead: a form, a custom op minify cannot carry)."""
    why = unreplayable_form(gm)
    if why is not None:
        raise ValueError(why)
    flat_gm, _ = lift_attributes(gm, [])
    rows = node_origins(flat_gm, by_seq_nr)
    write_json(folder / "nodes.json", rows)
    source = module_source(flat_gm)
    (folder / "graph.py").write_text(source)
    check_round_trip(source)
    return rows


def _record_backward(session: Session, key: int, forward_record: CapturedGraph, aten_gm, compile):
    """Record AOTAutograd's backward graph of Dynamo graph `key` like any other graph: its
    source now, its real inputs at its first call, checked against running it eagerly."""
    index, folder = session.new_graph()
    spec = {**forward_record.spec, "grad_enabled": False}  # replayed as a plain graph of tensors
    record = CapturedGraph(index=index, nodes=len(aten_gm.graph.nodes), spec=spec,
                           unreplayable_config=forward_record.unreplayable_config,
                           injections=[i.to_dict() for i in inject.active()], custom_backend=False, calls=0,
                           grad_enabled=False, part="backward", dynamo_graph=key, key=f"{key}.bw",
                           forward_index=forward_record.index)
    eager_gm = copy_graph(aten_gm)
    forward_rows = session.forward_rows.get(key, {})
    by_seq_nr = {seq: forward_rows[name] for seq, name in session.seq_sources.get(key, {}).items()
                 if name in forward_rows}
    try:
        _write_graph(folder, eager_gm, by_seq_nr)
    except Exception as exc:
        record.unsupported = _unsupported(exc)
    write_json(folder / "record.json", record.to_dict())
    try:
        compiled = compile()
    except Exception as exc:
        kind, sig, msg = exception_signature(exc, "inductor")
        record.failure = {"kind": kind, "signature": sig, "message": msg, "when": "compile",
                          "traceback": traceback.format_exc()[-4000:]}
        write_json(folder / "record.json", record.to_dict())
        return boxed(_wrap(None, eager_gm, folder, record, session))
    # A compiled backward may write into saved tensors it no longer needs (donated buffers):
    # its check runs it on copies, so only its outputs are compared.
    return wrap_compiled(compiled, lambda run: _wrap(run, eager_gm, folder, record, session,
                                                     checked=lambda *args: run(*clone_inputs(list(args)))))


def _unsupported(exc: Exception) -> str:  # why it cannot be replayed: _write_graph's ValueErrors are a sentence
    return str(exc) if isinstance(exc, ValueError) else f"{type(exc).__name__}: {exc}"


def _wrap(compiled, eager_gm, folder: Path, record: CapturedGraph, session: Session, checked=None):
    """Dynamo calls a backend's result with positional arguments; so does this wrapper. `compiled` None:
    compiling failed; save the inputs at the first call and run eagerly. `checked`: what the check runs."""
    model = collective_record.recording(eager_gm, folder, record, _write_graph)  # eager_gm, or its collectives kept

    def call(*args):
        if _fake_call(args):  # DDPOptimizer runs each compiled piece once on fake tensors: not a call to record
            return (compiled or eager_gm)(*args)
        record.calls += 1
        if record.calls == 1:
            save_inputs(folder, eager_gm, list(args), record)
            session.marker.write_text(str(record.index))
            getattr(model, "first_call", len)(args)
            if compiled is not None:
                check_call(model, _own_lists(args), checked or compiled, record, session.judging)
                collective_record.recheck_alone(model, lambda *a: judged_check(*a, "inductor", session.judging))
            write_json(folder / "record.json", record.to_dict())
        session.marker.write_text(str(record.index))
        if compiled is None or (record.failure is not None and record.failure["kind"] != "accuracy"):
            return model(*args)  # keep the script going on eager values
        if record.failure is None and cudagraphs.checks_call(record.spec, record.calls, args):
            return cudagraphs.checked_call(compiled, args, lambda before, seen: check_later_call(
                model, before, seen, eager_gm, folder, record, session.judging))
        return compiled(*args)

    return call


def _own_lists(args) -> list:
    """The check's arguments, lists copied: Dynamo's wrapper empties a list input (compiled autograd's)."""
    return [list(a) if isinstance(a, list) else a for a in args]


def _fake_call(args) -> bool:
    """On fake tensors (DDPOptimizer propagating shapes through a split graph's pieces), not the program's values?"""
    return any(isinstance(a, torch._subclasses.fake_tensor.FakeTensor) for a in args)


def install(session: Session, eager: bool = False, stage_backend: str | None = None) -> None:
    """Replace torch.compile by a recording version (the script sees no other difference),
    or, with `eager`, by one that compiles nothing: the script's own behaviour without the compiler;
    or, with `stage_backend`, by one that compiles every callable with that backend and records no graph
    (the program-level stage ladder). Each way the first outputs of each compiled callable are
    saved (calls/N.pt)."""
    original = torch.compile
    if not eager:
        disable_aot_cache()
    if eager or stage_backend is not None:  # nothing compiled: AOTInductor neither (compiler/aoti_control.py)
        aoti_control.turn_off()
    else:
        aoti_capture.install(session.out, session.judging)

    @functools.wraps(original)
    def recording_compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor",
                          mode=None, options=None, disable=False, **kwargs):
        if model is None:
            return lambda m: recording_compile(m, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                               mode=mode, options=options, disable=disable, **kwargs)
        if sys._getframe(1).f_globals.get("__name__", "").startswith("torch."):  # torch's own (torch.cond
            return original(model, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,  # run or
                            options=options, disable=disable, **kwargs)  # exported): not the script's graphs
        if eager:
            handle = eager_module(model) if isinstance(model, torch.nn.Module) else model
        elif stage_backend is not None:  # the script's backend, mode and options give way to it
            handle = original(model, fullgraph=fullgraph, dynamic=dynamic, backend=stage_backend, disable=disable,
                              **kwargs)
        else:
            rec = shared_backend(session, backend, mode, options, dynamic, fullgraph)
            handle = original(model, fullgraph=fullgraph, dynamic=dynamic, backend=rec, disable=disable, **kwargs)
        number = session.callables
        session.callables += 1
        return record_first_call(handle, session.out / "calls" / f"{number}.pt")

    torch.compile = recording_compile


def run_script(program: Launch | Path, args: list[str], out: Path, eager: bool = False,
               only: set[str] | None = None, backend: str | None = None, judging: Judging = Judging()) -> int:
    """Run the program (a script, a module or a test: compiler.launch_form) under the recording
    compile; how it ended goes to out/script.json."""
    out.mkdir(parents=True, exist_ok=True)
    session = Session(out, only, judging)
    install(session, eager, stage_backend=backend)
    ending: dict = {"status": "ok"}
    program = program if isinstance(program, Launch) else Launch.script(program)
    try:
        with kernel_marks(out / CAPTURE_MARKS):  # a kernel stuck for long ends the script early (minifier.capture)
            launch_form.run(program, args)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        ending = {"status": "exit", "code": code}
    except BaseException as exc:
        message = str(exc)[:2000]
        if isinstance(exc, EOFError):  # stdin is empty here: say so, the script's own message may not
            message = f"{message} (the script read standard input, which minify does not give it; pass what it " \
                      f"reads as arguments after --, or a file)"
        trace = traceback.format_exc()  # its head too: the program's own frames, above a deep Dynamo stack
        ending = {"status": "error", "type": type(exc).__name__, "message": message,
                  "traceback": trace if len(trace) <= 6000 else f"{trace[:2000]}\n...\n{trace[-4000:]}"}
    result = ScriptEnding(**ending, graphs=session.count, dynamo_graphs=session.dynamo_count,
                          callables=session.callables,
                          dynamo_disabled=bool(torch._dynamo.config.disable),  # the script or TORCH_COMPILE_DISABLE
                          injections=[i.to_dict() for i in inject.active()])
    write_json(out / "script.json", result.to_dict())
    session.marker.unlink(missing_ok=True)
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m compiler.capture")
    parser.add_argument("--form", choices=launch_form.FORMS, default="script",
                        help="what TARGET names: a script's path, a module's name (python -m) or a pytest node id")
    parser.add_argument("target", help="the script, module or test to run, in the current directory")
    parser.add_argument("out", type=Path)
    parser.add_argument("--eager", action="store_true", help="run without compiling anything")
    parser.add_argument("--only", metavar="KEYS",
                        help="compile only the graphs with these comma-separated keys (`3`: Dynamo graph 3, "
                             "`3.bw`: its backward); the others run eagerly and nothing is recorded")
    parser.add_argument("--backend", help="compile every callable with this backend and record nothing")
    parser.add_argument("--inject", action="append", default=[], metavar="SPEC",
                        help="plant this bug (compiler.inject.parse_spec) before the script runs")
    parser.add_argument("--judging", default="{}", metavar="JSON",
                        help="how outputs are judged: compiler.judging.Judging.to_dict() (atol, rtol, strict, ignore)")
    parser.add_argument("args", nargs=argparse.REMAINDER)
    ns = parser.parse_args()
    settings.apply()
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    for spec in ns.inject:  # planted like the script's own, so capture reports them the same way
        inject.apply(inject.parse_spec(spec))
    only = None if ns.only is None else {k for k in ns.only.split(",") if k}
    judging = Judging.from_dict(json.loads(ns.judging))
    program = Launch(ns.form, str(Path(ns.target).resolve()) if ns.form == "script" else ns.target, os.getcwd())
    quick_exit(run_script(program, args, ns.out, ns.eager, only, ns.backend, judging))


if __name__ == "__main__":
    main()
