"""`minify failing.py`, start to finish: capture, find the failing graph and stage, reduce,
write the repro, verify it in a fresh process, report.
"""
from __future__ import annotations

import contextlib
import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

import torch.fx as fx

from compiler import gpu_gate
from compiler.context import graph_modes
from compiler.stages import CompileSetup, CompileSpec
from minifier.capture.process import Capture, GraphRecord
from minifier.capture.values import load_graph, record_values, script_kernels
from minifier.emit.repro_folders import Verifications
from minifier.exit_codes import EXIT_MAX_TIME, EXIT_NOT_REPRODUCED, EXIT_OK
from minifier.localize import graphs as localize
from minifier.localize.early_checks import EarlyChecks, GraphState, wanted
from minifier.program.stage import eager_first, nothing_failed, replay_failed, user_op_fault
from minifier.reduce.budget import Budget
from minifier.report import html as html_report
from minifier.report.blame import blame_markdown
from minifier.report.bug_row import bug_row
from minifier.report.rows import finding_counts, graph_row, mark_unverified, run_status, verdict_kind, write_report
from minifier.report.same_bug import merge_same_bugs, reduced_in
from minifier.report.shared_causes import mark_shared_causes
from minifier.run.collective_run import collective_bug, collective_result
from minifier.run.stopped import StepsSeen, resume_line, write_stopped
from minifier.search.bugs import Bug, BugSearch, bugs_in_graph, bugs_in_pieces, cut_note, ends_its_process
from minifier.search.masking import known_ops
from minifier.search.unjudged_outputs import bugs_at_unjudged_outputs
from minifier.start.launch import Launched, Options, Result, UserError, cores, launch
from minifier.start.session import Session
from minifier.workers.answer import Answer
from minifier.workers.ask import Asker, first_check_limit
from minifier.workers.evaluate import Evaluator
from minifier.workers.main_cuda import start_cuda_aside
from minifier.workers.interpreters import WarmInterpreters
from minifier.workers.pool import WorkerPool
from minifier.workers.stop import STOP
from minifier.workers.worker import cuda_context_poisoned
from repro.issue_text import write_issue
from repro.versions import start as collect_env_start
from repro.testgen import write_tests


def run(opts: Options, ui, launched: Launched | None = None) -> Result:
    """The whole run; `launched` when the caller already started the slow processes."""
    launched = launched or launch(opts)
    zygote = launched.zygote
    ui = StepsSeen(ui)
    if opts.resume:
        ui.step(resume_line(launched.work))
    ui.step("starting workers")
    collect_env_start()  # issue.md's Versions: collect_env takes seconds, so it runs beside the search
    # One supply of warm interpreters for the workers and for repro.py's runs: forked from the
    # zygote (CPU builds of torch); elsewhere fresh ones, started ahead, under one GPU cap.
    interpreters = launched.interpreters or WarmInterpreters(zygote)
    pool = WorkerPool(opts.jobs, launched.work / "logs", timeout=opts.candidate_timeout, interpreters=interpreters,
                      prestarted=launched.workers)
    warm = interpreters.forks_warm
    verifiers = interpreters if opts.verify else None
    gpu = not warm and cuda_machine()
    if gpu:
        start_cuda_aside()
    # --max-time counts from the run's start: the capture is part of it
    deadline = time.monotonic() + opts.max_time - (time.perf_counter() - launched.start) if opts.max_time else None
    session = Session(opts, ui, launched, pool, verifiers, Budget(deadline, opts.max_compiles))
    getattr(ui, "watch", lambda session: None)(session)  # a progress display counts the workers' checks
    if wanted(opts.early_checks, cores(), gpu_gate.enabled()):
        session.early = EarlyChecks(launched.capture.folder, lambda *graph: _early_graph(session, *graph), opts.repeat)
    ending = STOP.on_stop(zygote.kill_group) if zygote is not None else None  # workers, repro runs
    try:
        return _run(session)
    except KeyboardInterrupt:  # Ctrl-C, SIGTERM (minifier.cli): every process is ended already
        STOP.request(STOP.reason or "interrupted")
        write_stopped(launched.out, opts.script, launched.start, session)
        raise
    finally:
        if ending is not None:
            STOP.forget(ending)
        with contextlib.suppress(OSError):  # a report of where the time went; never the run's error
            (launched.work / "timeline.json").write_text(json.dumps(pool.timeline, indent=0))
        launched.capture.stop()
        if session.early is not None:
            session.early.stop(set())
        interpreters.close()
        pool.close()
        if zygote is not None:
            zygote.close()


def cuda_machine() -> bool:
    """A GPU this torch can use (the parent has imported torch already)."""
    import torch

    return torch.cuda.is_available()


def _run(session: Session) -> Result:
    """The stages, in order: capture, search each failing graph (reducing its bugs, their repros
    verified on the side), localize, report."""
    capture = _finish_capture(session)
    if "ranks" in capture.script and (g := collective_bug(capture.graphs)) is not None:
        return collective_result(session, capture, g)  # the collective itself: a repro on the ranks
    user_op_fault(capture)  # a custom op's fake that disagrees with the op: the user's bug (exit 2)
    # A script that fails without the compiler too is the user's bug (exit 2). Its run with nothing
    # compiled goes on beside the graph search (a graph's own verdicts are judged against its own
    # eager run, so none waits for it); its answer is taken before anything is reported.
    eager_check = ThreadPoolExecutor(1, thread_name_prefix="eager-first")
    eager_done = eager_check.submit(eager_first, session, capture)
    try:
        found = _search_graphs(session, capture)
        eager_done.result()
    finally:
        eager_check.shutdown(wait=False)
    if not found.bugs:
        if found.unreplayable:  # a graph failed that no worker can replay: the program is reduced instead
            return replay_failed(session, capture, found.unreplayable[0])
        return nothing_failed(session, capture)
    rows, localized = _localize_while_verifying(session, found)
    if not any(b.small is not None for b in found.bugs):
        write_report(session.out, _base_report(session, capture, rows, found.evaluator_list()))
        error = _not_reproduced(capture, found.bugs[0])
        if found.bugs[0].reproduced == 0:  # not flaky: the replay is not the script's run
            return replay_failed(session, capture, error)
        raise error
    report = _final_report(session, capture, found, rows, localized)
    _write_outputs(session, report, localized, found.evaluator_list())
    return Result(EXIT_OK if report["status"] == "reproduced" else EXIT_NOT_REPRODUCED, report)


def _finish_capture(session: Session) -> Capture:
    session.ui.step(f"running {session.opts.script.name} under the recording backend")
    left, opts = None if session.budget.deadline is None else session.budget.deadline - time.monotonic(), session.opts
    capture = session.launched.capture.finish(opts.timeout, left, opts.hang_timeout)
    session.capture = capture
    if capture.stopped:  # --max-time ran out while the script ran: it was ended, nothing is searched
        session.budget.stopped = STOP.where = "max-time"
        write_stopped(session.out, session.opts.script, session.start, session, "stopped", "max-time")
        raise UserError(f"--max-time ({session.opts.max_time:g} s) ran out while the script ran; it was ended after "
                        f"{capture.seconds:.0f} s with {len(capture.graphs)} graph(s) captured and nothing searched "
                        f"(report.json says so); give more time with --max-time", EXIT_MAX_TIME)
    session.phases.add("capture", capture.seconds)
    session.pool.timeline.append(_capture_row(capture, session.launched.capture.start - session.pool.born))
    if session.early is not None:
        session.early.stop({g.index for g in capture.graphs if _searched(g)})
    session.pool.timeout = first_check_limit(session.pool.timeout, capture.seconds, session.opts.timeout)
    session.ui.capture_done(capture)
    failures = [g.failure for g in capture.graphs if g.failure]
    if any(ends_its_process(f.get("signature") or "") for f in failures):
        session.pool.keep_spares()
    if any(cuda_context_poisoned({"status": "fail", **f}) for f in failures):
        gpu_gate.mark_asserting()  # from now on one GPU job at a time (docs/gpu-safety.md)
    return capture


def _capture_row(capture: Capture, since: float) -> dict:
    """The capture as a timeline row (seconds since the pool's birth), with a job row's fields:
    what the workers did while the script ran is read against it."""
    return {"op": "capture", "stage": None, "runs": 1, "source_lines": 0, "queued": round(since, 2),
            "start": round(since, 2), "seconds": round(capture.seconds, 2), "status": capture.script.get("status"),
            "kind": None}


@dataclass
class Found:
    """What the search of the failing graphs found: the bugs, per graph what localization needs,
    and the evaluator of each graph searched (by graph index, in the order searched)."""

    bugs: list[Bug] = field(default_factory=list)
    to_localize: list[tuple] = field(default_factory=list)
    evaluators: dict[int, Evaluator] = field(default_factory=dict)
    verifications: Verifications | None = None
    unreplayable: list[UserError] = field(default_factory=list)  # failing graphs no worker can replay

    def evaluator_list(self) -> list[Evaluator]:
        return list(self.evaluators.values())


def _search_graphs(session: Session, capture: Capture) -> Found:
    """Confirm and reduce the bugs of every failing graph; failing graphs, and random ones (a
    seeded recheck tells whether only the RNG differs)."""
    found = Found()
    found.verifications = Verifications(session.opts, session.ui, session.launched, session.verifiers, capture,
                                        session.phases, session.pool, session.budget.deadline)
    session.verifications = found.verifications  # what a stop reports as verified so far
    opts = session.opts
    search = BugSearch(opts.repeat, session.ui.step, session.budget, opts.resume,
                       on_reduced=found.verifications.submit, phases=session.phases)
    for g in capture.graphs:
        if _searched(g):
            try:
                _check_replayable(g)
            except UserError as why:  # its inputs could not be saved, or its backend is the script's own
                if g.failure:
                    found.unreplayable.append(why)
                    g.record["replay_note"] = str(why)
                continue
            try:
                _search_graph(session, capture, g, found, search)
            except RaisesInEager as why:  # the program's own mistake: eager_first says so (exit 2)
                g.record["replay_note"] = str(why)
                if g.failure:
                    found.unreplayable.append(UserError(str(why), EXIT_NOT_REPRODUCED))
    found.verifications.executor.shutdown(wait=False)
    return found


def _searched(g: GraphRecord) -> bool:
    """Failing graphs, and random ones (a seeded recheck tells whether only the RNG differs)."""
    return bool(g.failure) or (verdict_kind(g) == "nondeterministic" and g.replayable)


def _search_graph(session: Session, capture: Capture, g: GraphRecord, found: Found, search: BugSearch) -> None:
    injections = capture.injections or g.record.get("injections", [])
    hang = (g.failure or {}).get("kind") == "hang"
    early = session.early.take(g.index, injections) if session.early is not None and not hang else None
    state = early or _graph_state(session, g, injections, hang)
    gm, inputs, values, ev = state.gm, state.inputs, state.values, state.ev
    found.evaluators[g.index] = ev
    spec, context = ev.setup.spec, ev.setup.context
    modes = lambda: graph_modes(context, spec.grad_enabled, inputs, only_autocast=True)
    if not g.failure and not _fails_seeded(g, gm, ev):
        return
    kernels = script_kernels(g, gm)
    with modes():
        bugs, last, piece = bugs_in_pieces(g.index, gm, values, ev, g.failure, search, kernels)
        if piece is not None:
            g.record["replay_note"] = bugs[0].notes["replay"]
            bugs += bugs_at_unjudged_outputs(g.index, gm, values, ev, g.failure, search)
        else:
            session.ui.step(f"graph {g.index}: confirming {g.failure['kind']} outside the script")
            bugs, last = bugs_in_graph(g.index, gm, values, ev, g.failure["signature"], search, kernels,
                                       masked_first=known_ops(gm, values, search.known, g.failure["signature"]))
        if bugs and bugs[0].reproduced == 0 and g.record.get("symbolic") and spec.dynamic is not True:
            bugs, last = _replay_dynamic(session, g, gm, values, ev, bugs, search)
    found.bugs.extend(bugs)
    g.record["bugs"] = len(bugs)
    # localized where the first bug was found: its piece, with the whole graph for the script lines
    found.to_localize.append((g, piece.gm if piece else gm, values, last, bugs, gm))


class RaisesInEager(Exception):
    """A failing graph that raises without the compiler too: no compiler bug of its own."""


def _early_graph(session: Session, index: int, folder: Path, record: dict) -> GraphState:
    """A graph whose inputs the capture saved, made ready while it still runs (EarlyChecks)."""
    return _graph_state(session, GraphRecord(index, folder, record["nodes"], record), record.get("injections", []))


def _graph_state(session: Session, g: GraphRecord, injections: list, hang: bool = False) -> GraphState:
    """The graph's module, real inputs, values recorded on them and the evaluator that asks about it."""
    gm, inputs = load_graph(g)
    case_dir = session.work / "cases" / f"graph_{g.index}"
    case_dir.mkdir(parents=True, exist_ok=True)
    spec, context = CompileSpec.from_dict(g.record["spec"]), g.record.get("context") or {}
    # Autocast changes the dtypes the graph computes in: the recorded values, the fake
    # tensors that validate candidates and the folds are all made under it, as in the script.
    with graph_modes(context, spec.grad_enabled, inputs, only_autocast=True):
        try:
            values = record_values(gm, inputs, case_dir)
        except Exception as exc:  # not the compiler's: the graph run eagerly on its own inputs raises
            raise RaisesInEager(f"graph {g.index} raises when run eagerly on its recorded inputs "
                                f"({type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''})")
    opts = session.opts
    calls_before = (g.failure or {}).get("calls_before", 0)  # a CUDA graphs bug: compiler/cudagraphs.py
    ev = Evaluator(session.pool, case_dir, CompileSetup(spec, injections, context, calls_before), signature="",
                   judging=opts.judging, timeout=opts.hang_timeout if hang else None)
    return GraphState(gm, inputs, values, ev, injections)


def _replay_dynamic(session: Session, g: GraphRecord, gm: fx.GraphModule, values: dict, ev: Evaluator,
                    static: list[Bug], search: BugSearch) -> tuple[list[Bug], Evaluator]:
    """The replay differs from the script in one way that can be tried: the script compiled the
    graph with symbolic sizes, the replay with the numbers of one call. Replayed with
    dynamic=True, does it fail? Then that is the difference that matters, said in one line, and
    the bug is reduced (and its repro written) with dynamic=True."""
    session.ui.step(f"graph {g.index}: passes when replayed with static sizes; the script traced it with "
                    f"symbolic sizes, so replaying it with dynamic=True")
    dynamic = replace(ev, setup=ev.setup.with_spec(dynamic=True))
    bugs, last = bugs_in_graph(g.index, gm, values, dynamic, g.failure["signature"], search)
    if not bugs or bugs[0].reproduced == 0:
        g.record["replay_note"] = ("replayed with static sizes and with dynamic=True (the script's symbolic sizes): "
                                   "it passes both ways")
        return static, ev
    g.record["replay_note"] = (f"fails only with dynamic shapes (as the script traced it): replayed static it "
                               f"passes, with dynamic=True it fails {bugs[0].reproduced}/{bugs[0].tries}")
    session.ui.step(f"graph {g.index}: {g.record['replay_note']}")
    for bug in bugs:
        bug.notes["replay"] = g.record["replay_note"]
    return bugs, last


def _fails_seeded(g: GraphRecord, gm: fx.GraphModule, ev: Asker) -> bool:
    """Nondeterministic at capture: does it still fail with seeded random numbers? Then it is a
    real bug, and `g.failure` says which."""
    answer = Answer.from_wire(ev.outcomes([gm])[0])
    g.record["rng_note"] = answer.message or ""
    if not answer.failed:
        return False
    g.failure = {"kind": answer.kind, "signature": answer.signature, "message": answer.message}  # record.json's form
    return True


def _localize_while_verifying(session: Session, found: Found) -> tuple[list[dict], list[dict]]:
    """Localization only adds to the report: it runs on the warm workers while the repros are
    verified in fresh processes (it passes its stage explicitly, so they do not interfere).
    Returns each bug's report row and what localization found (stages, divergent nodes, kernels)."""
    side = ThreadPoolExecutor(1)
    def localize_all() -> list:
        with session.phases.timed("localization"):
            return [localize.localize_bugs(*args, session.ui.step) for args in found.to_localize
                    if not session.budget.out_of_time()]  # it only adds to the report: not past --max-time

    localizing = side.submit(localize_all)
    rows = []
    for bug in found.bugs:
        row = bug_row(bug)
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
    if record.get("replay_note"):
        what += f"; {record['replay_note']}"
    return UserError(f"graph {first.graph} failed in the script ({first.message or first.signature}) but {what}",
                     EXIT_NOT_REPRODUCED)


def _final_report(session: Session, capture: Capture, found: Found, rows: list[dict], localized: list) -> dict:
    """report.json's content, with the first reduced bug's row at the top level; writes issue.md
    and the regression tests it names."""
    evaluators, out = found.evaluator_list(), session.out
    mark_unverified(rows, [cut_note(b) for b in found.bugs])
    reduced = rows[found.bugs.index(next(b for b in found.bugs if b.small is not None))]
    rows = merge_same_bugs(rows)  # one bug found in several graphs (forward and backward): one row
    # the top of the report is the first bug a verified repro stands behind (else the first reduced)
    first = next((r for r in rows if "repro" in r and "unverified" not in r), None) or reduced
    mark_shared_causes(rows)
    report = {**_base_report(session, capture, rows, evaluators), **first}
    budget = session.budget  # stopped: max-time/max-compiles/interrupted
    report.update(stopped=budget.stopped, reduce_compiles=budget.spent,
                  invalid_uncompiled=sum(e.rejected for e in evaluators))
    report.update(status=run_status(rows), findings=finding_counts(rows))
    localize.add_stage_verdicts(report["graphs"], localized)
    report["phases"] = session.phases.to_dict()
    report.update(localization=[localize.for_json(loc) for loc in localized], html=str(out / "report.html"))
    report["issue"] = str(write_issue(out, report, blame_markdown(report["blame"]) if report.get("blame") else [],
                                      run=found.verifications.error_run(report.get("repro"))))
    if session.opts.emit_test:
        # a planted bug is planted inside the test too, so it fails now (no effect without one)
        report["tests"] = [str(p) for p in write_tests(out, session.opts.emit_test, with_injection=True)]
    return report


def _write_outputs(session: Session, report: dict, localized: list, evaluators: list[Asker]) -> None:
    write_report(session.out, report)
    html_report.write_html(session.out, report, localized, session.pool.timeline)
    for i, ev in enumerate(evaluators):
        (session.work / f"candidates-{i}.json").write_text(json.dumps(ev.log, indent=1))


def _check_replayable(g: GraphRecord) -> None:
    what = (g.failure or {}).get("message", "nondeterministic")
    if not g.replayable:
        raise UserError(f"graph {g.index} fails ({what}) but could not be replayed: "
                        f"{g.record.get('unsupported', 'its inputs were not saved')}", EXIT_NOT_REPRODUCED)
    if g.record.get("custom_backend"):
        raise UserError(f"graph {g.index} fails ({what}) under the custom backend {g.record['spec']['backend']!r}, "
                        f"which minify cannot rebuild outside the script; pass the backend by its registered name",
                        EXIT_NOT_REPRODUCED)


def _base_report(session: Session, capture: Capture, rows: list, evaluators: list) -> dict:
    return {"status": "reproduced", "script": str(session.opts.script),
            "graphs": [graph_row(g) for g in capture.graphs],
            "graph_count": len(capture.graphs), "failing_graphs": reduced_in(rows),
            "bugs": rows, "compiles": sum(e.compiles for e in evaluators),
            "cache_hits": sum(e.cache_hits for e in evaluators), "worker_restarts": session.pool.restarts,
            "capture_seconds": round(capture.seconds, 2), "wall_seconds": round(time.perf_counter() - session.start, 2),
            **({"rank": capture.script["rank"], "ranks": capture.script["ranks"]} if "ranks" in capture.script else {})}
