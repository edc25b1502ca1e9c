"""`minify failing.py`, start to finish: capture, find the failing graph and stage, reduce,
write the repro, verify it in a fresh process, report.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import torch
import torch.fx as fx

from compiler.graph_code import module_from_source, trace_module
from compiler.inject import Injection
from compiler.stages import CompileSpec
from minifier.localize.capture_run import Capture, GraphRecord, run_capture
from minifier.workers.launch import (EXIT_BAD_INPUT, EXIT_NOTHING_FAILED, EXIT_NOT_REPRODUCED, EXIT_OK, Launched, Options, Result,
                             UserError, launch)
from minifier.reduce.bugs import Bug, bugs_in_graph
from minifier.blame.search import blame, blame_markdown
from minifier.reduce.budget import Budget
from minifier.workers.evaluate import Evaluator
from minifier.reduce.graph_edit import canonical, graph_inputs, op_label, op_nodes, placeholders
from minifier.localize import graphs as localize
from minifier.program import interaction
from minifier.report import html as html_report
from minifier.workers.pool import WorkerPool
from minifier.workers.zygote import ForkedRuns
from compiler.context import graph_modes
from repro.inputs import load_inputs
from repro.issue_text import write_issue
from repro.manifest import ReproFolderError
from repro.testgen import write_tests
from repro.verify import PrewarmedSupply, run_repro
from repro.writer import ReproInfo, write_repro

def load_graph(record: GraphRecord) -> tuple[fx.GraphModule, list]:
    source = (record.folder / "graph.py").read_text()
    gm = trace_module(module_from_source(source))
    inputs = load_inputs(record.folder / "inputs.pt")
    for p in placeholders(gm):
        p.target = p.name  # `def forward(self, x)` rather than `def forward(self, L_x_): x = L_x_`
        p.meta["value"] = p.name
    return gm, inputs


def record_values(gm: fx.GraphModule, inputs: list) -> dict:
    """Every value the graph computes on its real inputs, by node name (eager, fp as-is)."""
    values: dict = {}

    class Recorder(fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            if isinstance(result, torch.Tensor):
                values[node.name] = result.detach() if node.op != "placeholder" else result
            elif isinstance(result, (int, float, bool)):
                values[node.name] = result
            return result

    with torch.no_grad():
        Recorder(gm).run(*inputs)
    return values


def run(opts: Options, ui, launched: Launched | None = None) -> Result:
    """The whole run; `launched` when the caller already started the slow processes."""
    launched = launched or launch(opts)
    start, out, work, zygote = launched.start, launched.out, launched.work, launched.zygote
    ui.step("starting workers")
    pool = WorkerPool(opts.jobs, work / "logs", timeout=opts.candidate_timeout, zygote=zygote)
    # Processes forked from the zygote run repro.py (CPU builds of torch); elsewhere a
    # pre-started interpreter waits to run it.
    verifiers = None if not opts.verify else ForkedRuns(zygote) if zygote else PrewarmedSupply()
    try:
        return _run(opts, ui, out, work, pool, start, verifiers, launched)
    except KeyboardInterrupt:
        _write_interrupted(out, opts, start)
        raise
    finally:
        launched.capture.stop()
        if verifiers is not None:
            verifiers.close()
        pool.close()
        if zygote is not None:
            zygote.close()


def _run(opts: Options, ui, out: Path, work: Path, pool: WorkerPool, start: float,
         verifiers, launched: Launched) -> Result:
    ui.step(f"running {opts.script.name} under the recording backend")
    capture = launched.capture.finish(opts.timeout)
    ui.capture_done(capture)
    # Failing graphs, and random ones: a seeded recheck tells whether only the RNG differs.
    candidates = [g for g in capture.graphs if g.failure or (_verdict(g) == "nondeterministic" and g.replayable)]
    bugs: list[Bug] = []
    to_localize: list[tuple] = []  # per failing graph: what minifier.localize.graphs needs
    known: dict = {}
    evaluators: list[Evaluator] = []
    deadline = time.monotonic() + opts.max_time if opts.max_time else None
    budget = Budget(deadline, opts.max_compiles)  # shared by every reduction; records why one stopped early
    # Each reduced bug's repro is written and verified (in a fresh process) while the search
    # for further bugs goes on on the workers; one at a time, in the order they were found.
    verifying = ThreadPoolExecutor(1)
    verified: dict[int, Future] = {}

    def on_reduced(bug: Bug) -> None:
        ev = next(e for e in evaluators if e.case_dir.name == f"graph_{bug.graph}")
        final = ev.outcomes([bug.small], stage=bug.stage)[0]  # cached: asked here, on this thread
        folder = out if not verified else out / f"bug-{len(verified) + 1}"
        prewarmed = verifiers.take(another=True) if verifiers is not None else None
        verified[id(bug)] = verifying.submit(_write_and_verify, bug, folder, ev, final, capture, opts, ui, start,
                                             prewarmed, launched.zygote)

    for g in candidates:
        _check_replayable(g)
        gm, inputs = load_graph(g)
        case_dir = work / "cases" / f"graph_{g.index}"
        case_dir.mkdir(parents=True, exist_ok=True)
        spec, context = CompileSpec.from_dict(g.record["spec"]), g.record.get("context") or {}
        # Autocast changes the dtypes the graph computes in: the recorded values, the fake
        # tensors that validate candidates and the folds are all made under it, as in the script.
        modes = lambda: graph_modes(context, spec.grad_enabled, inputs, only_autocast=True)
        with modes():
            values = record_values(gm, inputs)
        torch.save(values, case_dir / "values.pt")
        ev = Evaluator(pool, case_dir, spec, capture.injections or g.record.get("injections", []), signature="",
                       atol=opts.atol, rtol=opts.rtol, strict=opts.strict, context=context)
        if (g.failure or {}).get("kind") == "hang":
            ev.timeout = opts.hang_timeout
        evaluators.append(ev)
        if not g.failure:  # nondeterministic at capture: a seeded recheck tells RNG from a real bug
            answer = ev.outcomes([gm])[0]
            g.record["rng_note"] = answer.get("message", "")
            if answer.get("status") != "fail":
                continue
            g.failure = {k: answer.get(k) for k in ("kind", "signature", "message")}
        ui.step(f"graph {g.index}: confirming {g.failure['kind']} outside the script")
        with modes():
            found = bugs_in_graph(g.index, gm, values, ev, g.failure["signature"], known, opts.repeat, ui.step,
                                  {"budget": budget, "resume": opts.resume}, on_reduced)
        bugs.extend(found)
        g.record["bugs"] = len(found)
        to_localize.append((g, gm, values, ev, found))
    verifying.shutdown(wait=False)
    if not bugs:
        return _nothing_failed(opts, capture, out, start, work, ui)
    # Localization only adds to the report: it runs on the warm workers while the repros are
    # verified in fresh processes (it passes its stage explicitly, so they do not interfere).
    side = ThreadPoolExecutor(1)
    localizing = side.submit(lambda: [localize.localize_bugs(*args, ui.step) for args in to_localize])
    reduced = [b for b in bugs if b.small is not None]
    rows = []
    for bug in bugs:
        row = _bug_row(bug)
        if bug.small is not None:
            row.update(verified[id(bug)].result())
        rows.append(row)
    localized = [loc for loc in localizing.result() if loc]  # stages, divergent nodes, kernels
    side.shutdown()
    localize.annotate_rows(bugs, rows, localized)
    if not reduced:
        first = bugs[0]
        what = (f"flaky: reproduced {first.reproduced} of {first.tries} times" if first.flaky else
                "did not reproduce when replayed alone (flaky, or dependent on state outside the graph)")
        record = next((g.record for g in capture.graphs if g.index == first.graph), {})
        if record.get("unreplayable_config"):
            what += ("; the script set Inductor config that cannot be carried to another process: "
                     + ", ".join(record["unreplayable_config"]))
        _write_report(out, _base_report(opts, capture, start, rows, evaluators, pool))
        raise UserError(f"graph {first.graph} failed in the script ({first.message or first.signature}) but {what}",
                        EXIT_NOT_REPRODUCED)
    report = {**_base_report(opts, capture, start, rows, evaluators, pool), **rows[bugs.index(reduced[0])]}
    report.update(stopped=budget.stopped, reduce_compiles=budget.spent,  # stopped: max-time/max-compiles/interrupted
                  invalid_uncompiled=sum(e.rejected for e in evaluators))
    report["status"] = "reproduced" if all(r.get("verified") is not False for r in rows if "repro" in r) \
        else "repro_failed"
    localize.add_stage_verdicts(report["graphs"], localized)
    report.update(localization=[localize.for_json(loc) for loc in localized], html=str(out / "report.html"))
    report["issue"] = str(write_issue(out, report, blame_markdown(report["blame"]) if report.get("blame") else []))
    if opts.emit_test:
        # a planted bug is planted inside the test too, so it fails now (no effect without one)
        report["tests"] = [str(p) for p in write_tests(out, opts.emit_test, with_injection=True)]
    _write_report(out, report)
    html_report.write_html(out, report, localized)
    for i, ev in enumerate(evaluators):
        (work / f"candidates-{i}.json").write_text(json.dumps(ev.log, indent=1))
    return Result(EXIT_OK if report["status"] == "reproduced" else EXIT_NOT_REPRODUCED, report)


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
           "failure": {"kind": bug.kind, "signature": bug.signature, "message": bug.message,
                       "stage": bug.stage, "culprit": bug.culprit, "metrics": bug.culprit_metrics},
           "reproduced": f"{bug.reproduced}/{bug.tries}", "flaky": bug.flaky, "ops_before": bug.ops_before,
           "first_divergent": bug.culprit, "divergent_roots": bug.divergent_roots}
    if bug.small is not None:
        row.update(ops_after=len(op_nodes(bug.small)), ops=[op_label(n) for n in op_nodes(bug.small)])
    return row


def _write_and_verify(bug: Bug, folder: Path, ev: Evaluator, final: dict, capture: Capture, opts: Options, ui,
                      start: float, prewarmed=None, zygote=None) -> dict:
    """Write the repro of `bug` (`final`: its reduced graph's answer) and verify it."""
    values = torch.load(ev.case_dir / "values.pt", weights_only=True)
    record = next(g.record for g in capture.graphs if g.index == bug.graph)
    spec, seed = ev.spec, None
    if final.get("seeded"):  # only from one seed with Inductor drawing random numbers as eager does
        spec, seed = CompileSpec.from_dict({**ev.spec.to_dict(), "config": {**ev.spec.config,
                                                                            "fallback_random": True}}), 0
    info = ReproInfo(signature=bug.signature, kind=bug.kind, stage=bug.stage,
                     message=final.get("message") or bug.message, spec=spec,
                     injections=[Injection.from_dict(d) for d in ev.injections],
                     source=f"{opts.script.name}, graph {bug.graph} of {len(capture.graphs)}",
                     atol=opts.atol, rtol=opts.rtol, strict=opts.strict, seed=seed,
                     context=record.get("context") or {}, script=opts.script.name, graph=bug.graph)
    small = canonical(bug.small)  # deterministic names and input order: one bug, one repro
    repro = write_repro(folder, small, graph_inputs(small, values), info)
    manifest = json.loads((folder / "repro.json").read_text())
    row = {"repro": str(repro), "inputs": str(folder / manifest["inputs_file"]) if manifest.get("inputs_file")
           else None, "final_metrics": final.get("metrics"), "reference": final.get("reference"),
           "graph_code": manifest["module_source"]}
    # Blame runs beside the fresh-process verification (each is one process that mostly waits on
    # its own import and compile); its answer is kept only if the repro verifies.
    with ThreadPoolExecutor(1) as side:
        blamed = side.submit(_blame, folder, ui, zygote) if opts.blame else None
        if opts.verify:
            ui.step(f"verifying {repro} in a fresh process")
            verification = run_repro(repro, prewarmed=prewarmed)
            row.update(verified=verification.reproduced, verify_line=verification.line)
        row["seconds_to_repro"] = round(time.perf_counter() - start, 2)  # script start to this repro, verified
        if blamed is not None and row.get("verified") is not False:
            row.update(blamed.result())
    return row


def _blame(folder: Path, ui, zygote=None) -> dict:
    ui.step(f"finding the compiler part to blame for {folder.name}")
    try:
        return {"blame": blame(folder, say=ui.step, zygote=zygote)}  # also written to folder/blame.json
    except ReproFolderError as exc:
        return {"blame_error": str(exc)}


def _base_report(opts: Options, capture: Capture, start: float, rows: list, evaluators: list, pool) -> dict:
    return {"status": "reproduced", "script": str(opts.script), "graphs": [_graph_row(g) for g in capture.graphs],
            "graph_count": len(capture.graphs), "failing_graphs": sorted({r["failing_graph"] for r in rows}),
            "bugs": rows, "compiles": sum(e.compiles for e in evaluators),
            "cache_hits": sum(e.cache_hits for e in evaluators), "worker_restarts": pool.restarts,
            "capture_seconds": round(capture.seconds, 2), "wall_seconds": round(time.perf_counter() - start, 2)}


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


def _script_failure(script: dict) -> str:
    """How a script run ended, in one line (comparable between a compiled and an eager run)."""
    status = script.get("status")
    if status == "error":
        first = (script.get("message") or "").strip().splitlines()
        return f"{script.get('type')}: {first[0] if first else ''}"[:300]
    if status == "exit":
        return f"exit status {script.get('code')}"
    return script.get("message", status or "")


def _graph_row(g: GraphRecord) -> dict:
    verdict = g.record.get("verdict") or {}
    note = g.record.get("rng_note") or (verdict.get("message") if verdict.get("status") == "invalid" else None)
    return {"index": g.index, "key": g.key, "part": g.part, "dynamo_graph": g.dynamo_graph,
            "nodes": g.nodes, "failing": bool(g.failure),
            "kind": (g.failure or {}).get("kind") or (verdict.get("kind") if verdict.get("status") == "invalid" else None),
            "message": (g.failure or {}).get("message"), "verdict": verdict.get("status"), "note": note}


def _nothing_failed(opts: Options, capture: Capture, out: Path, start: float, work: Path, ui=None) -> Result:
    """No graph fails on its own: check the program end to end (minifier.program.interaction), and if
    it fails, name the smallest set of graphs that must be compiled together for it to fail."""
    script = capture.script
    report = {"status": "nothing_failed", "graphs": [_graph_row(g) for g in capture.graphs],
              "graph_count": len(capture.graphs), "script_status": script.get("status"),
              "wall_seconds": round(time.perf_counter() - start, 2)}
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    what = interaction.script_failure(script)
    if not capture.graphs and what is None:
        raise UserError("the script never called a torch.compile'd function: nothing to check", EXIT_NOTHING_FAILED)
    say = ui.step if ui is not None else (lambda text: None)
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
        (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
        return Result(EXIT_NOTHING_FAILED, report)
    if not capture.graphs:
        raise UserError(f"the script fails only under torch.compile ({what}), before any graph was compiled; "
                        f"see {work / 'script.log'}", EXIT_NOT_REPRODUCED)
    say(f"the program fails end to end ({e2e.message}); finding the graphs that must be compiled together")
    found = interaction.find_interaction(opts.script.resolve(), opts.script_args, capture, eager, e2e,
                                         work / "subsets", opts.timeout, opts.atol, opts.rtol, say, opts.injections)
    report.update(status="interaction", script=str(opts.script), interaction=found.to_dict(),
                  failing_graphs=found.graphs, wall_seconds=round(time.perf_counter() - start, 2),
                  html=str(out / "report.html"))
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    html_report.write_html(out, report, [])
    return Result(EXIT_NOT_REPRODUCED, report)
