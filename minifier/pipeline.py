"""`minify failing.py`, start to finish: capture, find the failing graph and stage, reduce,
write the repro, verify it in a fresh process, report.
"""
from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.fx as fx

from compiler.graph_code import module_from_source
from compiler.inject import Injection
from compiler.stages import STAGES, CompileSpec
from minifier.capture_run import Capture, GraphRecord, run_capture
from minifier.evaluate import REPRODUCES, Evaluator
from minifier.graph_edit import op_label, op_nodes, placeholders
from minifier.passes import Context
from minifier.reducer import reduce_graph
from minifier.workers import WorkerPool
from repro.inputs import load_inputs
from repro.verify import run_repro
from repro.writer import ReproInfo, write_repro

EXIT_OK, EXIT_BAD_INPUT, EXIT_NOTHING_FAILED, EXIT_NOT_REPRODUCED = 0, 2, 3, 4


class UserError(Exception):
    """Bad input or a situation the user must know about: one line, non-zero exit."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.code = code


@dataclass
class Options:
    script: Path
    script_args: list[str] = field(default_factory=list)
    out: Path | None = None
    jobs: int = 2
    atol: float | None = None
    rtol: float | None = None
    timeout: float = 1800.0  # the whole script under capture
    candidate_timeout: float = 300.0
    max_time: float | None = None
    verify: bool = True


@dataclass
class Result:
    code: int
    report: dict


def check_script(script: Path) -> None:
    if not script.exists():
        raise UserError(f"no such file: {script}")
    if not script.is_file():
        raise UserError(f"not a file: {script}")
    try:
        compile(script.read_bytes(), str(script), "exec")
    except SyntaxError as exc:
        raise UserError(f"{script}:{exc.lineno}: syntax error: {exc.msg}") from None
    except ValueError as exc:
        raise UserError(f"{script}: cannot read as Python source: {exc}") from None


def output_folder(opts: Options) -> Path:
    out = (opts.out or Path("minify-out") / opts.script.stem).resolve()
    if out.resolve() == opts.script.resolve().parent:
        raise UserError(f"output folder {out} is the script's own folder; choose another with -o")
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / "work", ignore_errors=True)
    return out


def load_graph(record: GraphRecord) -> tuple[fx.GraphModule, list]:
    source = (record.folder / "graph.py").read_text()
    gm = fx.symbolic_trace(module_from_source(source))
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


def first_failing_stage(ev: Evaluator, gm: fx.GraphModule, kind: str) -> tuple[str, dict]:
    """The earliest stage whose failure has the same kind as the Inductor one."""
    for stage in [s for s in STAGES if s != "inductor"]:
        answer = ev.outcomes([gm], stage=stage)[0]
        if answer.get("status") == "fail" and answer.get("kind") == kind:
            return stage, answer
    return "inductor", {}


def run(opts: Options, ui) -> Result:
    start = time.perf_counter()
    check_script(opts.script)
    out = output_folder(opts)
    work = out / "work"
    ui.step("starting workers")
    pool = WorkerPool(opts.jobs, work / "logs", timeout=opts.candidate_timeout)
    try:
        return _run(opts, ui, out, work, pool, start)
    finally:
        pool.close()


def _run(opts: Options, ui, out: Path, work: Path, pool: WorkerPool, start: float) -> Result:
    ui.step(f"running {opts.script.name} under the recording backend")
    capture = run_capture(opts.script.resolve(), opts.script_args, work / "capture", work / "script.log", opts.timeout)
    ui.capture_done(capture)
    failing = [g for g in capture.failing if g.failure["kind"] != "nondeterministic"]
    if not failing:
        return _nothing_failed(opts, capture, out, start, work)
    target = next((g for g in failing if g.replayable), None)
    if target is None:
        raise UserError(f"graph {failing[0].index} fails ({failing[0].failure['message']}) but could not be "
                        f"replayed: {failing[0].record.get('unsupported', 'its inputs were not saved')}", 1)
    if target.record.get("custom_backend"):
        raise UserError(f"graph {target.index} fails ({target.failure['message']}) under the custom backend "
                        f"{target.record['spec']['backend']!r}, which minify cannot rebuild outside the script; "
                        f"pass the backend by its registered name", EXIT_NOT_REPRODUCED)
    gm, inputs = load_graph(target)
    values = record_values(gm, inputs)
    torch.save(values, work / "values.pt")
    spec = CompileSpec.from_dict(target.record["spec"])
    injections = capture.injections or target.record.get("injections", [])
    signature = target.failure["signature"]
    ev = Evaluator(pool, work, spec, injections, signature, atol=opts.atol, rtol=opts.rtol)

    ui.step(f"confirming graph {target.index} fails outside the script")
    confirm = ev.outcomes([gm])[0]
    if ev.verdict(confirm) != REPRODUCES:
        raise UserError(f"graph {target.index} failed in the script ({target.failure['message']}) but not when "
                        f"replayed alone ({confirm.get('status')} {confirm.get('kind', '')} "
                        f"{confirm.get('message', '')}); is the failure flaky or does it depend on state?",
                        EXIT_NOT_REPRODUCED)
    ui.step("finding the first failing stage")
    stage, stage_answer = first_failing_stage(ev, gm, target.failure["kind"])
    if stage != "inductor":
        ev.stage, ev.signature = stage, stage_answer["signature"]
    ops_before = len(op_nodes(gm))

    ui.step(f"reducing graph {target.index} ({ops_before} ops)")
    ctx = Context(values=values, kind=target.failure["kind"], window=pool.size)
    deadline = time.monotonic() + opts.max_time if opts.max_time else None
    small = reduce_graph(gm, ev, ctx, progress=ui.progress, deadline=deadline)

    repro_inputs = [values[p.meta["value"]] for p in placeholders(small)]
    final = ev.outcomes([small])[0]
    info = ReproInfo(signature=ev.signature, kind=target.failure["kind"], stage=ev.stage,
                     message=final.get("message") or target.failure["message"], spec=spec,
                     injections=[Injection.from_dict(d) for d in injections],
                     source=f"{opts.script.name}, graph {target.index} of {len(capture.graphs)}",
                     atol=opts.atol, rtol=opts.rtol)
    repro = write_repro(out, small, repro_inputs, info)
    verification = None
    if opts.verify:
        ui.step("verifying repro.py in a fresh process")
        verification = run_repro(repro)
    report = {
        "status": "reproduced" if verification is None or verification.reproduced else "repro_failed",
        "script": str(opts.script), "failure": {**target.failure, "stage": ev.stage, "signature": ev.signature},
        "graphs": [_graph_row(g) for g in capture.graphs], "graph_count": len(capture.graphs),
        "failing_graph": target.index, "failing_graphs": [g.index for g in failing],
        "stage": ev.stage, "ops_before": ops_before, "ops_after": len(op_nodes(small)),
        "ops": [op_label(n) for n in op_nodes(small)], "first_divergent": ctx.notes.get("first_divergent"),
        "compiles": ev.compiles, "cache_hits": ev.cache_hits, "worker_restarts": pool.restarts,
        "capture_seconds": round(capture.seconds, 2), "wall_seconds": round(time.perf_counter() - start, 2),
        "repro": str(repro), "inputs": str(out / "inputs.pt"),
        "verified": None if verification is None else verification.reproduced,
        "verify_line": None if verification is None else verification.line,
        "graph_code": (out / "repro.py").read_text().split("class Repro(torch.nn.Module):")[1].split("\n\n\n")[0],
    }
    (work / "candidates.json").write_text(json.dumps(ev.log, indent=1))
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    code = EXIT_OK if report["status"] == "reproduced" else EXIT_NOT_REPRODUCED
    return Result(code, report)


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
    return {"index": g.index, "nodes": g.nodes, "failing": bool(g.failure),
            "kind": (g.failure or {}).get("kind"), "message": (g.failure or {}).get("message"),
            "verdict": (g.record.get("verdict") or {}).get("status")}


def _nothing_failed(opts: Options, capture: Capture, out: Path, start: float, work: Path) -> Result:
    script = capture.script
    report = {"status": "nothing_failed", "graphs": [_graph_row(g) for g in capture.graphs],
              "graph_count": len(capture.graphs), "script_status": script.get("status"),
              "wall_seconds": round(time.perf_counter() - start, 2)}
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    failed = script.get("status") in ("error", "crash", "hang") or (script.get("status") == "exit" and script.get("code"))
    if failed:
        what = _script_failure(script)
        eager = run_capture(opts.script.resolve(), opts.script_args, work / "eager", work / "eager.log",
                            opts.timeout, eager=True).script
        if _script_failure(eager) == what:
            raise UserError(f"the script fails without torch.compile too, so it is not a compiler bug: {what}",
                            EXIT_BAD_INPUT)
        raise UserError(f"the script fails only under torch.compile ({what}), but no compiled graph fails on "
                        f"its own real inputs; see {work / 'script.log'}", EXIT_NOT_REPRODUCED)
    if not capture.graphs:
        raise UserError("the script never called a torch.compile'd function: nothing to check", EXIT_NOTHING_FAILED)
    return Result(EXIT_NOTHING_FAILED, report)
