"""The whole-program stage: no graph fails on its own, so the program itself is checked end to
end, its failure judged numerics where one graph's rounding explains it, else blamed on a layer
of torch.compile (minifier.program.layers) and reduced as a program (minifier.program.program_repro)."""
from __future__ import annotations

import os
import time
from pathlib import Path

from minifier.capture.process import Capture, run_capture
from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_NOT_REPRODUCED, EXIT_NOTHING_FAILED, EXIT_NUMERICS, EXIT_OK
from minifier.localize.numerics_hints import verified_hints
from minifier.program import aoti_reduce, aoti_stage, interaction
from minifier.program.layers import Layer, blame_layer, raised_in_dynamo
from minifier.program.program_repro import minify_program, write_program_issue, write_program_test
from minifier.report import html as html_report, numerics
from minifier.report.rows import graph_row, verdict_kind, write_report
from minifier.start.launch import Result, UserError, program_of
from minifier.start.session import Session


def nothing_failed(session: Session, capture: Capture) -> Result:
    """No graph fails on its own: check the program end to end (minifier.program.interaction), and if
    it fails, name the smallest set of graphs that must be compiled together for it to fail."""
    out, start, say = session.out, session.start, session.ui.step
    script = capture.script
    report = {"status": "nothing_failed", "graphs": [graph_row(g) for g in capture.graphs],
              "graph_count": len(capture.graphs), "script_status": script.get("status"),
              "wall_seconds": round(time.perf_counter() - start, 2)}
    what = interaction.script_failure(script)
    reduced = aoti_reduce.reduce_package(session, capture, report)  # a failing AOTInductor package, reduced
    if reduced is not None:
        return reduced
    aoti_stage.refuse(capture, None, out, report)  # a failing AOTInductor package not reduced (exit 9)
    write_report(out, report)
    if not capture.graphs and what is None and not aoti_stage.used(capture):
        raise UserError("the script never called a torch.compile'd function: nothing to check", EXIT_NOTHING_FAILED)
    say("no graph fails on its own: checking the whole program against a run with nothing compiled")
    eager, e2e = _end_to_end(session, capture, report)
    if e2e is None:
        report["end_to_end"] = report.get("end_to_end") or {"how": None, "message": "compiled and eager runs agree"}
        write_report(out, report)
        return Result(EXIT_NOTHING_FAILED, report)
    return _program_level(session, capture, eager, e2e, report)


def replay_failed(session: Session, capture: Capture, why: UserError) -> Result:
    """A graph failed in the script but passes when replayed alone (some of the script's state
    is not in the graph, or cannot be carried to another process): the program itself is then
    reduced, as for a failure no single graph shows, if its outputs differ from a run with
    nothing compiled; otherwise `why` is the answer."""
    session.ui.step(f"{why}; checking the whole program against a run with nothing compiled instead")
    report = {"status": "replay_failed", "script": str(session.opts.script), "replay": str(why),
              "graphs": [graph_row(g) for g in capture.graphs], "graph_count": len(capture.graphs)}
    eager, e2e = _end_to_end(session, capture, report)
    if e2e is None:
        e2e = _raised_when_compiled(session, capture, eager, report)
    if e2e is None:
        raise why
    return _program_level(session, capture, eager, e2e, report)


RAISING = ("compile_error", "runtime_error")


def _raised_when_compiled(session: Session, capture: Capture, eager: Capture, report: dict):
    """A graph that raised while compiling or running fell back to eager in the capture, so the
    script ran to its end there and matches eager: run it once more with every graph compiled
    as the script compiles it, nothing falling back, to see the failure end to end (None: the
    program still ends as it does with nothing compiled)."""
    if not any((g.failure or {}).get("kind") in RAISING for g in capture.graphs):
        return None
    opts = session.opts
    compiled = run_capture(program_of(opts), opts.script_args, session.work / "compiled", session.work / "compiled.log",
                           opts.timeout, injections=opts.injections, only=[g.key for g in capture.graphs])
    e2e = interaction.end_to_end_failure(compiled, eager, opts.judging)
    if e2e is None or e2e.how != "script":
        return None
    report["end_to_end"] = {**e2e.__dict__, "run": "every graph compiled, none falling back to eager"}
    return e2e


_EAGER_RUNS: dict[Path, Capture] = {}  # per run (its work folder): the script run with nothing compiled


def eager_run(session: Session) -> Capture:
    """The program run with nothing compiled (once per run of minify)."""
    opts, work = session.opts, session.work
    if work not in _EAGER_RUNS:
        _EAGER_RUNS[work] = run_capture(program_of(opts), opts.script_args, work / "eager", work / "eager.log",
                                        opts.timeout, eager=True, injections=opts.injections)
    return _EAGER_RUNS[work]


def eager_first(session: Session, capture: Capture) -> Capture | None:
    """Before anything is called a compiler bug: when the script's own run raised or exited
    non-zero, run it with nothing compiled; if it fails there as it did compiled (however
    Dynamo words the same mistake: interaction.fails_in_eager_too), it is the user's bug (exit 2)."""
    switch = compile_switched_off(capture)
    if switch is not None:
        raise UserError(f"{switch} turns torch.compile off, so nothing was compiled and there is nothing to "
                        f"check: unset it and run minify again", EXIT_BAD_INPUT)
    if capture.script.get("status") not in ("error", "exit") or interaction.script_failure(capture.script) is None:
        return None
    aoti_stage.refuse_prebuilt(capture)  # a package the control cannot turn off: no verdict rests on it
    session.ui.step("the script failed: running it with nothing compiled, to tell its own errors from the compiler's")
    eager = eager_run(session)
    fails_too = interaction.fails_in_eager_too(capture.script, eager.script)
    if fails_too is not None:
        exported = aoti_stage.export_failed(capture)
        if exported is not None:  # the exporter refused the program: the user's to change
            raise UserError(f"torch.export.export fails on the program, with nothing compiled too, so it is not a "
                            f"compiler bug; the exporter says: {exported}", EXIT_BAD_INPUT)
        raise UserError(f"the script fails without torch.compile too, so it is not a compiler bug: {fails_too}",
                        EXIT_BAD_INPUT)
    return eager


def user_op_fault(capture: Capture) -> None:
    """A failing graph whose custom op is defined wrongly on the graph's real inputs (it writes
    inputs its schema says it does not, or its fake disagrees with it: compiler/custom_ops.py,
    recorded by the capture): the compiler plans its code on both, so while one is wrong no
    verdict on the compiler can be given (it may also hide a compiler bug beside it). The
    user's to fix first (exit 2), never a compiler bug verdict."""
    for g in capture.graphs:
        faults = (g.failure and g.record.get("user_op_faults")) or []
        if faults:
            raise UserError(f"graph {g.index} fails compiled ({g.failure.get('kind')}) and the script's own custom "
                            f"op is defined wrongly: {faults[0]}; the compiler plans its code on the op's schema and "
                            f"fake, so fix the op's definition first (declare every input it writes in mutates_args; "
                            f"its fake must return the shape, dtype and strides the op returns): until then no "
                            f"verdict on the compiler can be given", EXIT_BAD_INPUT)


SWITCHES = ("TORCHDYNAMO_DISABLE", "TORCH_COMPILE_DISABLE")  # read by torch: "1" compiles nothing


def compile_switched_off(capture: Capture) -> str | None:
    """What turned compilation off in the script's run, when no graph was compiled: an
    environment variable, or torch._dynamo.config.disable set by the script."""
    if capture.graphs or aoti_stage.used(capture):  # AOTInductor compiles with Dynamo off
        return None
    named = next((name for name in SWITCHES if os.environ.get(name) == "1"), None)
    if named is not None:
        return f"{named}=1 in the environment"
    return "torch._dynamo.config.disable = True (set by the script)" if capture.script.get("dynamo_disabled") else None


def _end_to_end(session: Session, capture: Capture, report: dict) -> tuple[Capture, object]:
    """The program run with nothing compiled, and how the compiled run's outputs differ from it
    (None: they agree, or the program is not deterministic enough to tell)."""
    opts, work = session.opts, session.work
    eager = eager_first(session, capture) or eager_run(session)
    fails_too = interaction.fails_in_eager_too(capture.script, eager.script)  # a hang, a crash: the same ending
    if fails_too is not None:
        raise UserError(f"the script fails without torch.compile too, so it is not a compiler bug: {fails_too}",
                        EXIT_BAD_INPUT)
    e2e = interaction.end_to_end_failure(capture, eager, opts.judging)
    if e2e is not None and e2e.how == "outputs":
        again = run_capture(program_of(opts), opts.script_args, work / "eager2", work / "eager2.log",
                            opts.timeout, eager=True, injections=opts.injections)
        random = [g.index for g in capture.graphs if verdict_kind(g) == "nondeterministic"]
        if random or interaction.outputs_differ(again, eager, opts.judging, e2e.callable):
            report["end_to_end"] = {**e2e.__dict__, "trusted": False,
                                    "why": f"graphs {random} draw random numbers" if random else
                                    "two runs with nothing compiled differ: the script is not deterministic"}
            e2e = None
    return eager, e2e


def _program_level(session: Session, capture: Capture, eager: Capture, e2e, report: dict) -> Result:
    """The failure shows only in the whole program: name the layer of torch.compile it belongs
    to, then reduce the set of graphs that fail together, or else the program itself."""
    opts, work, say = session.opts, session.work, session.ui.step
    aoti_stage.refuse_program_level(capture, e2e, session.out, report)  # torch.compile's layers cannot blame AOTI
    say(f"the program fails end to end ({e2e.message}); running it with each layer of torch.compile")
    with session.phases.timed("program layers"):
        layer = blame_layer(program_of(opts), opts.script_args, eager, e2e, work / "layers", opts.timeout,
                            opts.injections, opts.judging)
    if layer.backend is None and raised_in_dynamo(capture.script):  # Dynamo raised while tracing
        layer = Layer("Dynamo", "eager", layer.runs)
    # Numerics can only come from code other than eager's: not when Dynamo or AOTAutograd alone
    # (backends eager, aot_eager: eager's own kernels) already show the failure.
    numeric = [g for g in capture.graphs if numerics.is_numerics(g.record.get("verdict") or {})]
    if numeric and layer.backend in (None, "aot_eager_decomp_partition"):
        alone = [numeric[0].index] if len(capture.graphs) == 1 else _graph_set(session, capture, eager, e2e, report)
        if len(alone) == 1 and alone[0] in {g.index for g in numeric}:
            return _numerics(session, capture, e2e, report, alone[0])
    report["layer"] = layer.to_dict()
    say(f"the failure belongs to {layer.name}" + (f" (it shows with backend={layer.backend})" if layer.backend else ""))
    if layer.backend is None and len(capture.graphs) >= 2 and "interaction" not in report:
        _graph_set(session, capture, eager, e2e, report)
    return _program_repro(session, capture, layer, report)


def _graph_set(session: Session, capture: Capture, eager: Capture, e2e, report: dict) -> list[int]:
    """The fewest graphs that must be compiled for the program to fail (the others eager)."""
    opts = session.opts
    session.ui.step("finding the graphs that must be compiled together")
    rerun = interaction.Rerun(program_of(opts), opts.script_args, session.work / "subsets", opts.timeout,
                              opts.injections)
    found = interaction.find_interaction(rerun, capture, eager, e2e, opts.judging, session.ui.step)
    report.update(interaction=found.to_dict(), failing_graphs=found.graphs)
    return found.graphs


def _numerics(session: Session, capture: Capture, e2e, report: dict, index: int) -> Result:
    """Compiling graph `index` alone makes the program differ, and that graph passed the ladder
    while differing from eager: numerics, not a miscompile (minifier.report.numerics)."""
    g = next(g for g in capture.graphs if g.index == index)
    hints = verified_hints(g, session.pool, session.work, session.ui.step) if g.replayable else []
    report.update(status="numerics", script=str(session.opts.script), failing_graphs=[index],
                  end_to_end=e2e.__dict__, numerics=numerics.verdict(g, e2e.message, hints),
                  wall_seconds=round(time.perf_counter() - session.start, 2))
    report["html"] = str(html_report.write_html(session.out, report, []))
    write_report(session.out, report)
    return Result(EXIT_NUMERICS, report)


def _program_repro(session: Session, capture: Capture, layer: Layer, report: dict) -> Result:
    """Reduce the program itself (minifier.program) and write its verified repro.py."""
    opts = session.opts
    with session.phases.timed("program reduction"):
        program = minify_program(program_of(opts), opts, session.out, session.work, layer, capture.injections,
                                 session.launched.zygote, session.ui.step)
    report.update(status="program", script=str(opts.script), program=program, phases=session.phases.to_dict(),
                  wall_seconds=round(time.perf_counter() - session.start, 2))
    if program.get("repro"):
        report["issue"] = str(write_program_issue(session.out, report))
        if opts.emit_test:
            report["tests"] = [str(write_program_test(report, opts.emit_test, opts.script.stem))]
    report["html"] = str(html_report.write_html(session.out, report, []))
    write_report(session.out, report)
    return Result(EXIT_OK if program.get("verified") else EXIT_NOT_REPRODUCED, report)
