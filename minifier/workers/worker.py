"""A warm worker process: imports torch once, then checks candidates one after another.

Run as `python -m minifier.workers.worker`. Jobs arrive on stdin and answers leave on the original
stdout, as messages of compiler/boot/wire.py (pickles behind their length); anything the compiler
or compiled code prints goes to stderr (the parent's log file) so it cannot corrupt the protocol.
If compiled code crashes the process, the parent sees it die and records the signal.
"""
from __future__ import annotations

import faulthandler
import os
import sys
import time

from compiler import gpu_gate
from minifier.workers import experiment
from minifier.workers.job import Job
from minifier.workers.protocol import CaseValues, Closed, read_message, resolve_inputs, write_message


def run_check(job: Job, values: CaseValues) -> dict:
    import contextlib

    import torch

    from compiler import device_asserts, inject, kernels, shared_compile
    from compiler.graph_code import module_from_source
    from compiler.stages import CompileSpec, fresh_compile_state, kernel_build_threads
    from compiler.oracle import check_against, expected_of
    from compiler.context import graph_modes
    from compiler.grads import Backward, requiring_grad

    spec = CompileSpec.from_dict(job.spec)
    inputs = resolve_inputs(values.get(job.case_dir), job.inputs)
    model = module_from_source(job.source)
    injections = [inject.Injection.from_dict(d) for d in job.injections]
    modes = lambda: graph_modes(job.context or {}, spec.grad_enabled, inputs)  # as the script ran it
    answers = []
    # after a device assert, the kernel map also says which nodes the asserting kernel computes
    waits = job.kernel_waits and job.stage == "inductor"
    recording = kernels.recorded_kernels() if job.kernel_map or waits else contextlib.nullcontext([])
    waiting = device_asserts.kernel_waits() if waits else contextlib.nullcontext([])
    loaded = shared_compile.loads()
    with inject.injected(*injections), recording as kernel_map, waiting as asserted_in:
        with fresh_compile_state(spec), shared_compile.stored_in(job.compile_store()), \
                kernel_build_threads(job.kernel_threads), modes():
            if job.backward:  # gradients judged too: eager's and the compiled backward graph's
                inputs = requiring_grad(inputs)
            eager = Backward(model) if job.backward else model
            compiled = compiled_for(job, model, spec, inputs)
            expected = expected_of(eager, inputs)  # eager and fp64 once; the compiled run each time
            outcomes = []
            for run in range(job.runs):  # no run after one that killed the CUDA context
                if run and job.calls_before:  # CUDA graphs: every run the same calls, on a compile of its own
                    torch._dynamo.reset()  # (a later call would follow what the earlier runs left)
                    compiled = compiled_for(job, model, spec, inputs)
                outcomes.append(check_against(expected, inputs, compiled, job.stage, job.judging))
                if cuda_context_poisoned(outcomes[-1].__dict__) or (job.until_pass and outcomes[-1].status == "pass"):
                    break
        for outcome in outcomes:
            seeded = outcome.kind == "nondeterministic"
            if seeded:
                with modes():
                    outcome = recheck_seeded(eager, inputs, spec, job.stage, outcome, job.judging)
            if job.judged_outputs:
                outcome = judged_on_first(outcome, job.judged_outputs, job.stage)
            # seeded: judged from seed 0 with fallback_random=True, as the repro must run it too
            answers.append({**outcome.__dict__, "seeded": seeded and outcome.status == "fail"})
    result = {**answers[0], "runs": answers} if len(answers) > 1 else answers[0]
    if shared_compile.loads() > loaded:  # another try's compile served this one (Job.share_compile)
        result = {**result, "compile_loaded": True}
    if kernel_map and job.kernel_map:  # the kernels the check built, for a later divergence job on this graph
        result = {**result, "kernels": [k.to_dict() for k in kernel_map]}
    if asserted_in and cuda_context_poisoned(result):  # where the reduction cuts first (cut_after_culprit)
        result["kernel_nodes"] = kernels.nodes_of(asserted_in, kernel_map)
    return result


def compiled_for(job: Job, model, spec, inputs: list):
    """`model` compiled for the job's stage (its backward too where gradients are judged), called
    `job.calls_before` times first (CUDA graphs: judged as late as in the script)."""
    from compiler.cudagraphs import prime
    from compiler.grads import Backward
    from compiler.stages import compile_for_stage

    compiled = compile_for_stage(model, job.stage, spec)
    compiled = Backward(compiled) if job.backward else compiled
    prime(compiled, inputs, job.calls_before)
    return compiled


def judged_on_first(outcome, count: int, stage: str):
    """`outcome` with its verdict made on the graph's first `count` outputs alone (those after
    are values it also returns for the divergence search to read); every output's metrics kept.
    A run that raised, or whose eager runs were invalid, has no per-output verdict to narrow."""
    from dataclasses import replace

    from compiler.oracle import outcome_of
    from minifier.graph.nodes import own_metrics

    if not outcome.metrics or outcome.rung == "exception":
        return outcome
    return replace(outcome_of(own_metrics(outcome.metrics, count), stage, outcome.reference), metrics=outcome.metrics)


def recheck_seeded(model, inputs, spec, stage, outcome, judging):
    """Random ops: compare again from one seed with Inductor drawing numbers as eager does."""
    from compiler.grads import Backward
    from compiler.stages import compile_for_stage, fresh_compile_state
    from compiler.oracle import judged_check

    seeded_spec = spec.seeded()
    forward = model.fn if isinstance(model, Backward) else model
    with fresh_compile_state(seeded_spec):
        compiled = compile_for_stage(forward, stage, seeded_spec)
        compiled = Backward(compiled) if isinstance(model, Backward) else compiled
        seeded = judged_check(model, inputs, compiled, stage, judging, seed=0)
    if seeded.status == "pass":
        outcome.message += ("; from one seed with fallback_random=True compiled matches eager: "
                            "only random-number generation differs, not a compiler bug")
        return outcome
    if seeded.status == "fail":
        seeded.message += " (from one seed, with fallback_random=True)"
    return seeded


def run_kernels(job: Job, values: CaseValues) -> dict:
    """Inductor's generated code for a candidate, and the graph nodes each kernel computes."""
    from compiler import inject, kernels
    from compiler.graph_code import module_from_source
    from compiler.stages import CompileSpec, fresh_compile_state
    from compiler.context import graph_modes

    spec = CompileSpec.from_dict(job.spec)
    inputs = resolve_inputs(values.get(job.case_dir), job.inputs)
    injections = [inject.Injection.from_dict(d) for d in job.injections]
    modes = graph_modes(job.context or {}, spec.grad_enabled, inputs)
    with inject.injected(*injections), fresh_compile_state(spec), modes:
        code, found = kernels.generated_code(module_from_source(job.source), inputs, spec)
    return {"status": "ok", "code": code, "kernels": [k.to_dict() for k in found], "compiles": 0}  # nothing built


def run_divergence(job: Job, values: CaseValues) -> dict:
    from minifier.workers.divergence_worker import run_divergence as run

    return run(job, values)


def answer(job: Job, values: CaseValues) -> dict:
    """What the worker answers to one job: its op run on its graph."""
    run = {"kernels": run_kernels, "divergence": run_divergence}.get(job.op, run_check)
    return run(job, values)


def answer_message(message: dict, values: CaseValues) -> dict:
    """A compiler experiment on a repro folder (minifier/workers/experiment.py), or a Job."""
    if message["op"] == experiment.OP:
        return experiment.answer(experiment.ExperimentJob.from_dict(message))
    return answer(Job.from_dict(message), values)


POISONING = gpu_gate.POISONING


def cuda_context_poisoned(result: dict) -> bool:
    """A device-side assert or illegal access spoils the process's CUDA context for good."""
    text = f"{result.get('signature', '')} {result.get('message', '')}"
    return result.get("status") != "pass" and gpu_gate.poisons(text)


def reset_peak_memory() -> None:
    """Start this job's peak resident memory afresh (Linux; elsewhere the peak is the process's)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_memory_mib() -> float | None:
    """Peak resident memory since reset_peak_memory(), in MiB: what one job held at most."""
    try:
        with open("/proc/self/status") as f:
            line = next(x for x in f if x.startswith("VmHWM:"))
        return round(int(line.split()[1]) / 1024, 1)
    except (OSError, StopIteration, ValueError):
        return None


def warm_up() -> dict:
    """Pay Inductor's one-time start-up cost before the first real candidate arrives (a worker
    forked from the zygote, `--forked`, has paid it there), and import what checks use."""
    import torch

    import compiler.graph_code, compiler.stages, compiler.oracle  # noqa: F401, E401
    from minifier.workers.main_cuda import start_cuda

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cuda":
        start_cuda()
    if "--forked" not in sys.argv:
        # The device the case most likely runs on: on a GPU machine the first C++ compile of a
        # fresh process costs tens of seconds (Inductor's vector-ISA probes each start a Python
        # that imports torch), longer than the capture it should hide behind; a Triton one, less.
        torch.compile(lambda x: x * 2 + 1)(torch.ones(4, device=device))
        torch._dynamo.reset()
    return {"status": "ready", "device": device, "ready_at": time.time()}


def main() -> None:
    from compiler import settings
    from compiler.program_files import FOLDER_ENV, RUN_FOLDER

    settings.apply()
    # A pool outside a run (minify bisect's own, a test's) names no programs folder: the graphs go
    # beside its logs, this process's working directory (pool.py), not to a temporary folder that
    # a worker killed at the pool's end would leave behind.
    os.environ.setdefault(FOLDER_ENV, os.path.join(os.getcwd(), RUN_FOLDER))
    protocol_out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # prints from compiled code go to the log, not into the protocol
    faulthandler.enable()  # a crash leaves its stacks in the log: which kernel it ran (compiler/crash_trace.py)
    from compiler.crash_trace import kernel_marks, marks_path

    with kernel_marks(marks_path(os.getcwd(), os.getpid())):  # and its marks file, where stacks come cut short
        serve(sys.stdin.buffer, protocol_out)


def serve(protocol_in, protocol_out) -> None:
    """Answer jobs one after another until the pool closes our stdin or we must retire."""
    values = CaseValues()
    while True:
        try:
            message = read_message(protocol_in)
        except Closed:  # the pool closed our stdin (or died mid-job): nothing more to do
            return
        start = time.perf_counter()
        reset_peak_memory()
        try:
            result = warm_up() if message["op"] == "warmup" else answer_message(message, values)
        except Exception as exc:  # a broken job must not kill a warm worker
            import traceback

            result = {"status": "invalid", "kind": "worker_error",
                      "message": f"{type(exc).__name__}: {exc}"[:500], "traceback": traceback.format_exc()[-3000:]}
        result["seconds"] = time.perf_counter() - start
        result["peak_mib"] = peak_memory_mib()
        # retired: spoiled by a device assert, or asked to end (an experiment's crash or planted bug)
        poisoned = cuda_context_poisoned(result)
        result["asked_retire"] = not poisoned and bool(result.get("retire") or message.get("retire"))
        result["retire"] = poisoned or result["asked_retire"]
        write_message(protocol_out, result)
        if result["retire"]:
            return  # every later CUDA call here would fail too: the pool starts a fresh worker


if __name__ == "__main__":
    main()
    from compiler.quick_exit import quick_exit

    quick_exit(0)
