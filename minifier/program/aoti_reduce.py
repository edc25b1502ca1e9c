"""An AOTInductor package that failed in the script, reduced to a verified repro.

The capture saved the package's ExportedProgram (`aoti_N/exported.pt2`) and its real inputs.
Its graph (`ep.graph_module`: ATen ops, the weights lifted to inputs) is reduced with the
per-graph search the torch.compile path uses (minifier.search.bugs), asked of one of two
compilers: torch.compile's Inductor when the whole graph fails there the same way (a compile
takes a second or two), else the graph exported and compiled with aoti_compile_and_package in
the worker (compiler/aoti_compile.py: faithful, a C++ library per candidate). Whichever reduced
it, repro.py compiles the small graph with AOTInductor, and it is verified in a fresh process
and against a control with AOTInductor off, as a torch.compile repro is.
"""
from __future__ import annotations

import copy
import json
import time
from dataclasses import dataclass

import torch
import torch.fx as fx
import torch.utils._pytree as pytree

from compiler.aoti_compile import BACKEND
from compiler.graph_code import module_from_source, module_source, placeholders, trace_module
from compiler.stages import CompileSetup, CompileSpec
from minifier.capture.process import Capture
from minifier.capture.values import record_values
from minifier.exit_codes import EXIT_NOT_REPRODUCED, EXIT_OK
from minifier.graph.edit import canonical, graph_inputs
from minifier.program.aoti_inline import flatten
from minifier.program.aoti_stage import packages, running
from minifier.report.bug_row import bug_row
from minifier.report.rows import write_report
from minifier.search.bugs import BugSearch, bugs_in_graph
from minifier.start.launch import Result
from minifier.start.session import Session
from minifier.workers.evaluate import Evaluator
from repro.info import ReproInfo
from repro.verify import run_control, run_repro
from repro.writer import write_repro


@dataclass
class Package:
    """The failing package: its index, saved folder, what failed and the bugs planted when it compiled."""

    index: int
    folder: object
    kind: str
    injections: list


def failing_package(capture: Capture) -> Package | None:
    """The first package that failed: a compile error or wrong outputs it recorded, or the one
    that was running when the script's process died."""
    records = packages(capture)
    failed = next((r for r in records if r.get("failure")), None)
    if failed is not None:
        return Package(failed["index"], capture.folder / f"aoti_{failed['index']}", failed["failure"]["kind"],
                       failed.get("injections") or capture.injections)
    index = running(capture)
    if index is not None and capture.script.get("status") == "crash":
        record = next((r for r in records if r.get("index") == index), {})
        return Package(index, capture.folder / f"aoti_{index}", "crash", record.get("injections") or capture.injections)
    return None


def exported_graph(package: Package, both_branches: bool = False) -> tuple[fx.GraphModule, list, list[str]] | str:
    """The package's exported graph as a flat FX graph (weights, buffers and constants lifted
    to inputs; a torch.cond replaced by the branch the inputs take, a torch.while_loop unrolled:
    minifier/program/aoti_inline.py), its real inputs in placeholder order and one line per
    control-flow node flattened; or why it cannot be replayed."""
    from torch.export.graph_signature import InputKind  # noqa: PLC0415 (torch.export loads lazily)

    try:
        ep = torch.export.load(package.folder / "exported.pt2")
    except Exception as exc:
        return f"its exported program could not be loaded ({type(exc).__name__}: {exc})"
    saved = package.folder / "inputs.pt"
    args, kwargs = (ep.example_inputs or ((), {})) if not saved.exists() else _saved_call(saved)
    user = iter(pytree.tree_leaves((args, kwargs)))
    inputs = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            inputs.append(next(user))
        elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER):
            inputs.append(ep.state_dict[spec.target] if spec.target in ep.state_dict else ep.constants[spec.target])
        else:
            inputs.append(ep.constants[spec.target])
    inputs = [x.detach() if isinstance(x, torch.Tensor) else x for x in inputs]
    graph_module, inputs = _constants_in_graph(ep, inputs)
    flat = flatten(graph_module, inputs, both_branches)
    if isinstance(flat, str):
        return flat
    gm = trace_module(module_from_source(module_source(flat.gm)))
    for p in placeholders(gm):
        p.target = p.name
        p.meta["value"] = p.name
    return gm, inputs, flat.notes


SMALL_CONSTANT = 64  # elements: a tensor constant of the module this small stays one in the graph


def _constants_in_graph(ep, inputs: list) -> tuple[fx.GraphModule, list]:
    """Small tensor constants of the module (`torch.tensor([10**9])` in its forward, which export
    lifts to an input) written back into the graph as `torch.tensor(values, dtype=...)`: Inductor
    folds a constant where it cannot fold an input, and a bug can hang on that (pytorch#175966)."""
    from torch.export.graph_signature import InputKind  # noqa: PLC0415

    gm = copy.deepcopy(ep.graph_module)
    kept = []
    nodes = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for spec, node, value in zip(ep.graph_signature.input_specs, nodes, inputs):
        small = isinstance(value, torch.Tensor) and value.numel() <= SMALL_CONSTANT and value.device.type == "cpu"
        if spec.kind != InputKind.CONSTANT_TENSOR or not small:
            kept.append(value)
            continue
        first_op = next(n for n in gm.graph.nodes if n.op != "placeholder")
        with gm.graph.inserting_before(first_op):
            made = gm.graph.call_function(torch.tensor, (value.tolist(),), {"dtype": value.dtype})
        node.replace_all_uses_with(made)
        gm.graph.erase_node(node)
    gm.recompile()
    return gm, kept


def _saved_call(path) -> tuple:
    saved = torch.load(path, weights_only=False)
    return tuple(saved.get("args") or ()), dict(saved.get("kwargs") or {})


def _same_failure(answer: dict, kind: str) -> bool:
    """The worker's answer is the script's failure: the same kind (a crash or a hang kills the worker)."""
    return answer.get("status") == "fail" and answer.get("kind") == kind


def evaluator_for(session: Session, package: Package, gm: fx.GraphModule, values: dict) -> tuple:
    """The evaluator to reduce with and its first answer: torch.compile's Inductor if the graph
    fails there as the package did, else AOTInductor in the worker; (None, why) if neither does."""
    case_dir = session.work / "cases" / f"aoti_{package.index}"
    tried = []
    for backend in ("inductor", BACKEND):
        setup = CompileSetup(CompileSpec(backend=backend, grad_enabled=False), package.injections, {})
        ev = Evaluator(session.pool, case_dir, setup, signature="", judging=session.opts.judging)
        session.ui.step(f"AOTInductor package {package.index}: replaying its exported graph with "
                        f"{'torch.compile (Inductor)' if backend == 'inductor' else 'aoti_compile_and_package'}")
        answer = ev.outcomes([gm])[0]
        if _same_failure(answer, package.kind):
            return ev, answer
        tried.append(f"{backend}: {answer.get('status')} {answer.get('kind') or ''}".strip())
    return None, "; ".join(tried)


@dataclass
class Replay:
    """The exported graph made flat, its recorded values and the evaluator that sees it fail as
    the package did (None: it does not, and `answer` says how the replay ended instead)."""

    gm: fx.GraphModule | None
    values: dict
    ev: Evaluator | None
    answer: dict | str
    flattened: list[str]


def replay(session: Session, package: Package, both_branches: bool = False) -> Replay:
    """The package's exported graph replayed alone (flattened, with `both_branches` for a compile error)."""
    loaded = exported_graph(package, both_branches)
    if isinstance(loaded, str):
        return Replay(None, {}, None, loaded, [])
    gm, inputs, flattened = loaded
    case_dir = session.work / "cases" / f"aoti_{package.index}"
    case_dir.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        values = record_values(gm, inputs, case_dir)
    ev, answer = evaluator_for(session, package, gm, values)
    if ev is None:
        answer = (f"its exported graph{_as(flattened)} does not fail the same way ({package.kind}) when replayed: "
                  f"{answer}")
    return Replay(gm, values, ev, answer, flattened)


def _as(flattened: list[str]) -> str:
    return f" (flattened: {'; '.join(flattened)})" if flattened else ""


def reduce_package(session: Session, capture: Capture, report: dict) -> Result | None:
    """Reduce the failing AOTInductor package's graph and verify its repro; None when there is no
    failing package or its graph does not fail again outside the script (report says why)."""
    package = failing_package(capture)
    if package is None:
        return None
    done = replay(session, package)
    if done.ev is None and package.kind == "compile_error" and any("torch.cond" in n for n in done.flattened):
        again = replay(session, package, both_branches=True)  # the package compiled the branches not taken too
        done = again if again.ev is not None else Replay(None, {}, None, f"{done.answer}; {again.answer}", [])
    if done.ev is None:
        report["aoti_replay"] = done.answer
        return None
    if done.flattened:  # the graph replayed is the exported one with its control flow made flat
        report["aoti_flattened"] = done.flattened
    search = BugSearch(session.opts.repeat, session.ui.step, session.budget, phases=session.phases)
    with torch.no_grad():
        bugs, _ = bugs_in_graph(package.index, done.gm, done.values, done.ev, done.answer["signature"], search)
    bug = next((b for b in bugs if b.small is not None), None)
    if bug is None:
        report["aoti_replay"] = (f"its exported graph{_as(done.flattened)} failed {bugs[0].reproduced} of "
                                 f"{bugs[0].tries} replays" if bugs else
                                 f"its exported graph{_as(done.flattened)} did not fail again when replayed")
        return None
    return _write_and_verify(session, capture, package, bug, done.ev, done.values, report)


def _write_and_verify(session: Session, capture: Capture, package: Package, bug, ev: Evaluator, values: dict,
                      report: dict) -> Result:
    """repro.py (the small graph compiled with AOTInductor) in the output folder, run in a fresh
    process (it must fail) and with AOTInductor off (it must pass)."""
    opts, out = session.opts, session.out
    info = ReproInfo(signature=bug.signature, kind=bug.kind, stage="inductor", message=bug.message,
                     setup=CompileSetup(CompileSpec(backend=BACKEND, grad_enabled=False), tuple(package.injections)),
                     source=f"{opts.script.name}, AOTInductor package {package.index}{_flat_note(report)}",
                     judging=opts.judging,
                     script=opts.script.name, graph=package.index)
    small = canonical(bug.small)
    repro = write_repro(out, small, graph_inputs(small, values), info)
    verified, row = _verify(session, repro) if opts.verify else (None, {})  # None: --no-verify
    row = {**bug_row(bug), "repro": str(repro), "inputs": str(out / "inputs.pt") if (out / "inputs.pt").exists()
           else None, **({} if verified is None else {"verified": verified}), **row, "aoti_package": package.index,
           "reduced_with": "torch.compile (Inductor)" if ev.setup.spec.backend == "inductor"
           else "aoti_compile_and_package",
           "graph_code": json.loads((out / "repro.json").read_text())["function_source"]}
    report.update(row, status="repro_failed" if verified is False else "reproduced", script=str(opts.script),
                  bugs=[row], failing_graphs=[], compiles=ev.compiles, cache_hits=ev.cache_hits,
                  worker_restarts=session.pool.restarts, reduce_compiles=session.budget.spent,
                  capture_seconds=round(capture.seconds, 2), phases=session.phases.to_dict(),
                  wall_seconds=round(time.perf_counter() - session.start, 2))
    write_report(out, report)
    return Result(EXIT_NOT_REPRODUCED if verified is False else EXIT_OK, report)


def _flat_note(report: dict) -> str:
    """What the repro's graph stands for, where the exported graph's control flow was flattened."""
    flattened = report.get("aoti_flattened") or []
    return "" if not flattened else (f"; its control flow flattened for the saved inputs, so this graph has no "
                                     f"torch.cond / torch.while_loop: {'; '.join(flattened)}")


def _verify(session: Session, repro) -> tuple[bool, dict]:
    """repro.py in a fresh process must fail; with AOTInductor off (the control) it must pass."""
    session.ui.step(f"verifying {repro} in a fresh process (AOTInductor on, then off)")
    with session.phases.timed("verification"):
        verification = run_repro(repro)
        control = run_control(repro) if verification.reproduced else None
    verified = verification.reproduced and control is not None and control.reproduced
    row = {"verify_line": verification.line}
    if not verified:
        row["unverified"] = (f"fails with AOTInductor off too: {control.line}" if control is not None
                             else f"repro.py did not reproduce: {verification.line}")
    return verified, row
