"""`minify failing.py`, start to finish: capture, find the failing graph and stage, reduce,
write the repro, verify it in a fresh process, report.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.fx as fx

from compiler.context import graph_modes
from compiler.graph_code import module_from_source, trace_module
from compiler.signature import rung_of
from compiler.stages import CompileSpec
from minifier.blame.render import blame_markdown
from minifier.emit.repro_folders import Verifications
from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_NOT_REPRODUCED, EXIT_NOTHING_FAILED, EXIT_NUMERICS, EXIT_OK
from minifier.localize import graphs as localize
from minifier.phases import Phases
from minifier.localize.capture_run import Capture, GraphRecord, run_capture
from minifier.localize.graph_values import load_graph, record_values
from minifier.localize.numerics_hints import verified_hints
from minifier.program import interaction
from minifier.program.layers import Layer, blame_layer, raised_in_dynamo
from minifier.program.program_repro import minify_program, write_program_issue, write_program_test
from minifier.reduce.budget import Budget
from minifier.reduce.bugs import Bug, BugSearch, bugs_in_graph
from minifier.reduce.graph_edit import op_label, op_nodes, placeholders
from minifier.report import html as html_report, numerics
from minifier.workers.evaluate import Evaluator
from minifier.workers.launch import Launched, Options, Result, UserError, launch
from minifier.workers.pool import WorkerPool
from minifier.workers.zygote import ForkedRuns
from repro.inputs import load_inputs
from repro.issue_text import write_issue
from repro.testgen import write_tests
from repro.verify import PrewarmedSupply


@dataclass
class Session:
    """What every stage of one run shares, fixed when it starts: the options, the progress
    display, the started processes, the worker pool, the reduction budget (shared by every
    reduction; it records why one stopped early) and what runs repro.py to verify it."""

    opts: Options
    ui: Any
    launched: Launched
    pool: WorkerPool
    verifiers: Any
    budget: Budget
    phases: Phases = field(default_factory=Phases)  # wall seconds per phase (the report's timing table)

    @property
    def out(self) -> Path:
        return self.launched.out

    @property
    def work(self) -> Path:
        return self.launched.work

    @property
    def start(self) -> float:
        return self.launched.start


def run(opts: Options, ui, launched: Launched | None = None) -> Result:
    """The whole run; `launched` when the caller already started the slow processes."""
    launched = launched or launch(opts)
    zygote = launched.zygote
    ui.step("starting workers")
    pool = WorkerPool(opts.jobs, launched.work / "logs", timeout=opts.candidate_timeout, zygote=zygote)
    # Processes forked from the zygote run repro.py (CPU builds of torch); elsewhere a
    # pre-started interpreter waits to run it.
    verifiers = None if not opts.verify else ForkedRuns(zygote) if zygote else PrewarmedSupply()
    deadline = time.monotonic() + opts.max_time if opts.max_time else None
    try:
        return _run(Session(opts, ui, launched, pool, verifiers, Budget(deadline, opts.max_compiles)))
    except KeyboardInterrupt:
        _write_interrupted(launched.out, opts, launched.start)
        raise
    finally:
        launched.capture.stop()
        if verifiers is not None:
            verifiers.close()
        pool.close()
        if zygote is not None:
            zygote.close()


def _run(session: Session) -> Result:
    """The stages, in order: capture, search each failing graph (reducing its bugs, their repros
    verified on the side), localize, report."""
    capture = _finish_capture(session)
    found = _search_graphs(session, capture)
    if not found.bugs:
        return _nothing_failed(session, capture)
    rows, localized = _localize_while_verifying(session, found)
    if not any(b.small is not None for b in found.bugs):
        _write_report(session.out, _base_report(session, capture, rows, found.evaluator_list()))
        raise _not_reproduced(capture, found.bugs[0])
    report = _final_report(session, capture, found, rows, localized)
    _write_outputs(session, report, localized, found.evaluator_list())
    return Result(EXIT_OK if report["status"] == "reproduced" else EXIT_NOT_REPRODUCED, report)


def _finish_capture(session: Session) -> Capture:
    session.ui.step(f"running {session.opts.script.name} under the recording backend")
    capture = session.launched.capture.finish(session.opts.timeout)
    session.phases.add("capture", capture.seconds)
    session.ui.capture_done(capture)
    return capture


@dataclass
class Found:
    """What the search of the failing graphs found: the bugs, per graph what localization needs,
    and the evaluator of each graph searched (by graph index, in the order searched)."""

    bugs: list[Bug] = field(default_factory=list)
    to_localize: list[tuple] = field(default_factory=list)
    evaluators: dict[int, Evaluator] = field(default_factory=dict)
    verifications: Verifications | None = None

    def evaluator_list(self) -> list[Evaluator]:
        return list(self.evaluators.values())


def _search_graphs(session: Session, capture: Capture) -> Found:
    """Confirm and reduce the bugs of every failing graph; failing graphs, and random ones (a
    seeded recheck tells whether only the RNG differs)."""
    found = Found()
    found.verifications = Verifications(session.opts, session.ui, session.launched, session.verifiers, capture,
                                        session.phases)
    opts = session.opts
    search = BugSearch(opts.repeat, session.ui.step, session.budget, opts.resume,
                       on_reduced=found.verifications.submit, phases=session.phases)
    for g in capture.graphs:
        if g.failure or (_verdict(g) == "nondeterministic" and g.replayable):
            _search_graph(session, capture, g, found, search)
    found.verifications.executor.shutdown(wait=False)
    return found


def _search_graph(session: Session, capture: Capture, g: GraphRecord, found: Found, search: BugSearch) -> None:
    _check_replayable(g)
    gm, inputs = load_graph(g)
    case_dir = session.work / "cases" / f"graph_{g.index}"
    case_dir.mkdir(parents=True, exist_ok=True)
    spec, context = CompileSpec.from_dict(g.record["spec"]), g.record.get("context") or {}
    # Autocast changes the dtypes the graph computes in: the recorded values, the fake
    # tensors that validate candidates and the folds are all made under it, as in the script.
    modes = lambda: graph_modes(context, spec.grad_enabled, inputs, only_autocast=True)
    with modes():
        values = record_values(gm, inputs)
    torch.save(values, case_dir / "values.pt")
    opts = session.opts
    hang = (g.failure or {}).get("kind") == "hang"
    ev = Evaluator(session.pool, case_dir, spec, capture.injections or g.record.get("injections", []), signature="",
                   atol=opts.atol, rtol=opts.rtol, strict=opts.strict, ignore=opts.ignore, context=context,
                   timeout=opts.hang_timeout if hang else None)
    found.evaluators[g.index] = ev
    if not g.failure and not _fails_seeded(g, gm, ev):
        return
    session.ui.step(f"graph {g.index}: confirming {g.failure['kind']} outside the script")
    with modes():
        bugs, last = bugs_in_graph(g.index, gm, values, ev, g.failure["signature"], search)
    found.bugs.extend(bugs)
    g.record["bugs"] = len(bugs)
    found.to_localize.append((g, gm, values, last, bugs))


def _fails_seeded(g: GraphRecord, gm: fx.GraphModule, ev: Evaluator) -> bool:
    """Nondeterministic at capture: does it still fail with seeded random numbers? Then it is a
    real bug, and `g.failure` says which."""
    answer = ev.outcomes([gm])[0]
    g.record["rng_note"] = answer.get("message", "")
    if answer.get("status") != "fail":
        return False
    g.failure = {k: answer.get(k) for k in ("kind", "signature", "message")}
    return True


def _localize_while_verifying(session: Session, found: Found) -> tuple[list[dict], list[dict]]:
    """Localization only adds to the report: it runs on the warm workers while the repros are
    verified in fresh processes (it passes its stage explicitly, so they do not interfere).
    Returns each bug's report row and what localization found (stages, divergent nodes, kernels)."""
    side = ThreadPoolExecutor(1)
    def localize_all() -> list:
        with session.phases.timed("localization"):
            return [localize.localize_bugs(*args, session.ui.step) for args in found.to_localize]

    localizing = side.submit(localize_all)
    rows = []
    for bug in found.bugs:
        row = _bug_row(bug)
        if bug.small is not None:
            row.update(found.verifications.row(bug))
        rows.append(row)
    localized = [loc for loc in localizing.result() if loc]
    side.shutdown()
    localize.annotate_rows(found.bugs, rows, localized)
    return rows, localized


def _not_reproduced(capture: Capture, first: Bug) -> UserError:
    """No bug was reduced: the first one was flaky or did not reproduce alone."""
    what = (f"flaky: reproduced {first.reproduced} of {first.tries} times" if first.flaky else
            "did not reproduce when replayed alone (flaky, or dependent on state outside the graph)")
    record = next((g.record for g in capture.graphs if g.index == first.graph), {})
    if record.get("unreplayable_config"):
        what += ("; the script set Inductor config that cannot be carried to another process: "
                 + ", ".join(record["unreplayable_config"]))
    return UserError(f"graph {first.graph} failed in the script ({first.message or first.signature}) but {what}",
                     EXIT_NOT_REPRODUCED)


def _final_report(session: Session, capture: Capture, found: Found, rows: list[dict], localized: list) -> dict:
    """report.json's content, with the first reduced bug's row at the top level; writes issue.md
    and the regression tests it names."""
    evaluators, out = found.evaluator_list(), session.out
    first = next(b for b in found.bugs if b.small is not None)
    report = {**_base_report(session, capture, rows, evaluators), **rows[found.bugs.index(first)]}
    budget = session.budget  # stopped: max-time/max-compiles/interrupted
    report.update(stopped=budget.stopped, reduce_compiles=budget.spent,
                  invalid_uncompiled=sum(e.rejected for e in evaluators))
    report["status"] = "reproduced" if all(r.get("verified") is not False for r in rows if "repro" in r) \
        else "repro_failed"
    localize.add_stage_verdicts(report["graphs"], localized)
    report["phases"] = session.phases.to_dict()
    report.update(localization=[localize.for_json(loc) for loc in localized], html=str(out / "report.html"))
    report["issue"] = str(write_issue(out, report, blame_markdown(report["blame"]) if report.get("blame") else []))
    if session.opts.emit_test:
        # a planted bug is planted inside the test too, so it fails now (no effect without one)
        report["tests"] = [str(p) for p in write_tests(out, session.opts.emit_test, with_injection=True)]
    return report


def _write_outputs(session: Session, report: dict, localized: list, evaluators: list[Evaluator]) -> None:
    _write_report(session.out, report)
    html_report.write_html(session.out, report, localized)
    for i, ev in enumerate(evaluators):
        (session.work / f"candidates-{i}.json").write_text(json.dumps(ev.log, indent=1))


def _verdict(g: GraphRecord) -> str:
    return ((g.record.get("verdict") or {}).get("kind") or "")


def _check_replayable(g: GraphRecord) -> None:
    what = (g.failure or {}).get("message", "nondeterministic")
    if not g.replayable:
        raise UserError(f"graph {g.index} fails ({what}) but could not be replayed: "
                        f"{g.record.get('unsupported', 'its inputs were not saved')}", EXIT_NOT_REPRODUCED)
    if g.record.get("custom_backend"):
        raise UserError(f"graph {g.index} fails ({what}) under the custom backend {g.record['spec']['backend']!r}, "
                        f"which minify cannot rebuild outside the script; pass the backend by its registered name",
                        EXIT_NOT_REPRODUCED)


def _bug_row(bug: Bug) -> dict:
    row = {"failing_graph": bug.graph, "also_in_graphs": bug.also_in, "stage": bug.stage,
           "inductor_bug": bug.stage == "inductor",
           "failure": {"kind": bug.kind, "rung": rung_of(bug.signature), "signature": bug.signature,
                       "message": bug.message,
                       "stage": bug.stage, "culprit": bug.culprit, "metrics": bug.culprit_metrics},
           "reproduced": f"{bug.reproduced}/{bug.tries}", "flaky": bug.flaky, "ops_before": bug.ops_before,
           "first_divergent": bug.culprit, "divergent_roots": bug.divergent_roots}
    if bug.small is not None:
        row.update(ops_after=len(op_nodes(bug.small)), ops=[op_label(n) for n in op_nodes(bug.small)],
                   passes=bug.notes.get("passes", {}))  # per pass: runs, compiles, successes
    return row


def _base_report(session: Session, capture: Capture, rows: list, evaluators: list) -> dict:
    return {"status": "reproduced", "script": str(session.opts.script),
            "graphs": [_graph_row(g) for g in capture.graphs],
            "graph_count": len(capture.graphs), "failing_graphs": sorted({r["failing_graph"] for r in rows}),
            "bugs": rows, "compiles": sum(e.compiles for e in evaluators),
            "cache_hits": sum(e.cache_hits for e in evaluators), "worker_restarts": session.pool.restarts,
            "capture_seconds": round(capture.seconds, 2), "wall_seconds": round(time.perf_counter() - session.start, 2)}


def _write_report(out: Path, report: dict) -> None:
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))


def _write_interrupted(out: Path, opts: Options, start: float) -> None:
    """Ctrl-C: what was found so far stays (repros already written, work/ with its checkpoints
    for --resume) and report.json says the run was interrupted."""
    began = time.time() - (time.perf_counter() - start)
    repros = [str(p) for p in [out / "repro.py", *sorted(out.glob("bug-*/repro.py"))]
              if p.exists() and p.stat().st_mtime >= began]
    _write_report(out, {"status": "interrupted", "script": str(opts.script), "repros": repros,
                        "wall_seconds": round(time.perf_counter() - start, 2),
                        "resume": "the same command with --resume continues from the checkpoints in work/"})



def _graph_row(g: GraphRecord) -> dict:
    verdict = g.record.get("verdict") or {}
    note = g.record.get("rng_note") or (verdict.get("message") if verdict.get("status") == "invalid" else None) \
        or (verdict.get("message", "")[:160] if verdict.get("kind") == "numerics" else None)
    return {"index": g.index, "key": g.key, "part": g.part, "dynamo_graph": g.dynamo_graph,
            "nodes": g.nodes, "failing": bool(g.failure),
            "kind": (g.failure or {}).get("kind")
            or (verdict.get("kind") if verdict.get("status") == "invalid" else None),
            "message": (g.failure or {}).get("message"), "verdict": verdict.get("status"), "note": note}


def _nothing_failed(session: Session, capture: Capture) -> Result:
    """No graph fails on its own: check the program end to end (minifier.program.interaction), and if
    it fails, name the smallest set of graphs that must be compiled together for it to fail."""
    opts, out, work, start, say = session.opts, session.out, session.work, session.start, session.ui.step
    script = capture.script
    report = {"status": "nothing_failed", "graphs": [_graph_row(g) for g in capture.graphs],
              "graph_count": len(capture.graphs), "script_status": script.get("status"),
              "wall_seconds": round(time.perf_counter() - start, 2)}
    _write_report(out, report)
    what = interaction.script_failure(script)
    if not capture.graphs and what is None:
        raise UserError("the script never called a torch.compile'd function: nothing to check", EXIT_NOTHING_FAILED)
    say("no graph fails on its own: checking the whole program against a run with nothing compiled")
    eager = run_capture(opts.script.resolve(), opts.script_args, work / "eager", work / "eager.log", opts.timeout,
                        eager=True, injections=opts.injections)
    if what is not None and interaction.script_failure(eager.script) == what:
        raise UserError(f"the script fails without torch.compile too, so it is not a compiler bug: {what}",
                        EXIT_BAD_INPUT)
    e2e = interaction.end_to_end_failure(capture, eager, opts.atol, opts.rtol)
    if e2e is not None and e2e.how == "outputs":
        again = run_capture(opts.script.resolve(), opts.script_args, work / "eager2", work / "eager2.log",
                            opts.timeout, eager=True, injections=opts.injections)
        random = [g.index for g in capture.graphs if _verdict(g) == "nondeterministic"]
        if random or interaction.outputs_differ(again, eager, opts.atol, opts.rtol, e2e.callable):
            report["end_to_end"] = {**e2e.__dict__, "trusted": False,
                                    "why": f"graphs {random} draw random numbers" if random else
                                    "two runs with nothing compiled differ: the script is not deterministic"}
            e2e = None
    if e2e is None:
        report["end_to_end"] = report.get("end_to_end") or {"how": None, "message": "compiled and eager runs agree"}
        _write_report(out, report)
        return Result(EXIT_NOTHING_FAILED, report)
    return _program_level(session, capture, eager, e2e, report)


def _program_level(session: Session, capture: Capture, eager: Capture, e2e, report: dict) -> Result:
    """The failure shows only in the whole program: name the layer of torch.compile it belongs
    to, then reduce the set of graphs that fail together, or else the program itself."""
    opts, out, work, say = session.opts, session.out, session.work, session.ui.step
    numeric = [g for g in capture.graphs if numerics.is_numerics(g.record.get("verdict") or {})]
    if numeric:  # a graph passed the ladder while differing from eager: is it all the program needs?
        alone = [numeric[0].index] if len(capture.graphs) == 1 else _graph_set(session, capture, eager, e2e, report)
        if len(alone) == 1 and alone[0] in {g.index for g in numeric}:
            return _numerics(session, capture, e2e, report, alone[0])
    say(f"the program fails end to end ({e2e.message}); running it with each layer of torch.compile")
    with session.phases.timed("program layers"):
        layer = blame_layer(opts.script.resolve(), opts.script_args, eager, e2e, work / "layers", opts.timeout,
                            opts.injections, opts.atol, opts.rtol)
    if layer.backend is None and raised_in_dynamo(capture.script):  # Dynamo raised while tracing
        layer = Layer("Dynamo", "eager", layer.runs)
    report["layer"] = layer.to_dict()
    say(f"the failure belongs to {layer.name}" + (f" (it shows with backend={layer.backend})" if layer.backend else ""))
    if layer.backend is None and len(capture.graphs) >= 2 and "interaction" not in report:
        _graph_set(session, capture, eager, e2e, report)
    return _program_repro(session, capture, layer, report)


def _graph_set(session: Session, capture: Capture, eager: Capture, e2e, report: dict) -> list[int]:
    """The fewest graphs that must be compiled for the program to fail (the others eager)."""
    opts = session.opts
    session.ui.step("finding the graphs that must be compiled together")
    rerun = interaction.Rerun(opts.script.resolve(), opts.script_args, session.work / "subsets", opts.timeout,
                              opts.injections)
    found = interaction.find_interaction(rerun, capture, eager, e2e, opts.atol, opts.rtol, session.ui.step)
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
    _write_report(session.out, report)
    return Result(EXIT_NUMERICS, report)


def _program_repro(session: Session, capture: Capture, layer: Layer, report: dict) -> Result:
    """Reduce the program itself (minifier.program) and write its verified repro.py."""
    opts = session.opts
    with session.phases.timed("program reduction"):
        program = minify_program(opts.script.resolve(), session.out, session.work, layer, capture.injections,
                                 opts.timeout, session.launched.zygote, session.ui.step, opts.injections)
    report.update(status="program", script=str(opts.script), program=program, phases=session.phases.to_dict(),
                  wall_seconds=round(time.perf_counter() - session.start, 2))
    if program.get("repro"):
        report["issue"] = str(write_program_issue(session.out, report))
        if opts.emit_test:
            report["tests"] = [str(write_program_test(report, opts.emit_test, opts.script.stem))]
    report["html"] = str(html_report.write_html(session.out, report, []))
    _write_report(session.out, report)
    return Result(EXIT_OK if program.get("verified") else EXIT_NOT_REPRODUCED, report)
