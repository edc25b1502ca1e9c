"""Which part of the compiler a minimal repro needs in order to fail (the search behind `minify bisect`).

A verified repro says *what* fails; a compiler engineer next asks *where*: which
decomposition, graph pass, node lowering, fusion, code path or config flag. Each question is
an experiment (compiler/subsystems.py) run on the repro's minimal graph as a job of a warm
worker (minifier/workers/experiment.py, asked by minifier/blame/jobs.py): a switch "makes it
go away" when the repro's oracle then says `pass`. The search spends few compiles: one recording run lists what the compiler applied
(decompositions, passes, lowered nodes); each subsystem is first switched off as a whole
(one compile), and only a subsystem whose switch makes the failure go away is narrowed down
by splitting its applications in halves (`minimal_set`). The search stops once a single
culprit (a decomposition, a pass, a fused pair, a node's lowering) is named.

The result is a list of findings, e.g. {"what": "codegen", "finding": "fails only with the
vectorized C++ path", "run": {"config": {"cpp.simdlen": 1}, "verdict": "pass"}}, written to
REPRO_DIR/blame.json together with the probes that ruled other parts out.
"""
from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from compiler.subsystems import (ALL, DECOMPOSITION, LOWERINGS, NO_VECTORIZATION, PASS_SUBSYSTEMS, SCALAR_CPP,
                                 Experiment, config_defaults)
from minifier.workers.stop import STOP
from minifier.blame.ahead import AheadRuns
from minifier.blame.config_probes import config_flags, config_reverted, partitioner, script_config
from minifier.blame.experiments import Search, experiment_key
from minifier.blame.halving import minimal_set
from minifier.blame.jobs import BlameJobs, own_pool
from minifier.workers.worker import POISONING
from repro.manifest import read_manifest

BLAME_FILE = "blame.json"
CRASHING = ("crash@", "hang@")
# Scalar C++ needs none of the ISA checks, and any correct CPU code tells a Triton bug from the rest.
ON_CPU = Experiment("scalar C++ backend instead of Triton", config=dict(SCALAR_CPP), device="cpu")
SCALAR = Experiment("scalar C++ (no vectorization)", config=dict(NO_VECTORIZATION))
NO_FUSION = Experiment("no fusion (every node its own kernel)", apart=ALL)


def blame(repro_dir: Path, say: Callable[[str], None] = print, pool=None) -> list[dict]:
    """Run the blame search on a verified repro folder; write REPRO_DIR/blame.json; return findings.
    Its experiments are jobs of `pool` (minifier.workers.pool.WorkerPool: the run's), else of
    a pool of its own."""
    return blame_report(repro_dir, say, pool)["blame"]


def blame_report(repro_dir: Path, say: Callable[[str], None] = print, pool=None) -> dict:
    """The whole blame.json content: findings, probes that ruled parts out, every run."""
    start = time.perf_counter()
    manifest = read_manifest(repro_dir)
    stage = manifest.get("stage", "inductor")
    # A crash kills the worker; a CUDA device-side assert spoils its context for every later run.
    isolate = manifest["signature"].startswith(CRASHING) or any(m in manifest["signature"] for m in POISONING)
    timeout = 60.0 if isolate else 300.0
    with own_pool(pool) as workers:
        jobs = BlameJobs(workers, repro_dir, stage, isolate=isolate, timeout=timeout)
        started = jobs.start()
        # each compiles new kernels: asked beside the baseline, on another worker
        ahead = AheadRuns(jobs, first_experiments(manifest)) if stage == "inductor" else None
        search = Search(jobs, manifest, say, ahead=ahead)
        try:
            reproduced = search_blame(search, stage, jobs.info(started))
        finally:
            for asked in search.early.values():  # asked early, never wanted: not asked if not begun
                asked.cancel()
            if ahead is not None:
                ahead.close()
            jobs.close()
        restarts = jobs.restarts
    report = {"repro": str(repro_dir.resolve()), "signature": manifest["signature"], "stage": stage,
              "reproduced": reproduced, "blame": search.findings, "ruled_out": search.ruled_out,
              "runs": [{"name": r.experiment.name, **r.to_json(), "seconds": r.answer.get("seconds")}
                       for r in search.runs],
              "compiles": len(search.runs), "worker_restarts": restarts,
              "seconds": round(time.perf_counter() - start, 2)}
    STOP.check()  # probes a stop ended (Ctrl-C) answer as crashes: no blame rests on them
    (repro_dir / BLAME_FILE).write_text(json.dumps(report, indent=1, default=str))
    return report


def search_blame(search: Search, stage: str, info: dict) -> bool:
    """All experiments for one repro, cheapest and most telling first; False if it did not reproduce."""
    baseline = search.run(Experiment("baseline", record=True))
    if baseline.verdict != "reproduces":
        search.findings.append({"what": "baseline", "finding": "the repro did not reproduce its failure "
                                f"({baseline.verdict}), so nothing can be blamed", "run": baseline.to_json()})
        return False
    search.recorded = baseline.answer
    if stage == "inductor" and search.ahead is not None:
        early = [passes_off(search), NO_FUSION, all_aten(search), lone_fallback(search)]
        if search.worker.isolate:  # a fresh process each anyway: side by side
            search.ahead.start({experiment_key(e): e for e in early if e is not None})
        else:
            search.run_early(early)  # cheap, each on cached kernels
    script_config(search, info.get("script_defaults") or {})
    if stage == "aot_eager_decomp_partition":
        decompositions(search) or partitioner(search)
    elif stage == "inductor":
        inductor_stage(search, info)
    else:
        search.findings.append({"what": "stage", "finding": f"fails at {stage} already: before Inductor's "
                                "decompositions and passes, so no Inductor part is to blame",
                                "run": baseline.to_json()})
    return True


def inductor_stage(search: Search, info: dict) -> None:
    """Code path first (one compile each), then the subsystems that can name one culprit."""
    device = info.get("device", "cpu")
    path = codegen(search, device)
    if passes(search) or fusion(search, device, path):
        return
    if search.base == NO_VECTORIZATION:  # fusion() found that the failure needs the scalar C++ path
        path = "scalar"
    if lowerings(search, path):
        return
    config_flags(search, info.get("flips") or {})
    if not search.findings:  # an Inductor failure that still needs a decomposition
        decompositions(search)


def first_experiments(manifest: dict) -> dict[str, Experiment]:
    """What an Inductor repro's search always asks first, by key, to start beside the baseline:
    the code-path probe (a GPU repro's on the CPU, a CPU repro's scalar C++), and with the
    script's config all reverted (defaults as this process has them; the search's own come from
    its worker, so where they differ the answer is not used)."""
    first = ON_CPU if manifest.get("device", "cpu") != "cpu" else SCALAR
    experiments = [first]
    changed = sorted(manifest.get("config") or {})
    if changed:
        defaults = config_defaults()
        experiments.append(config_reverted(changed, {k: defaults.get(k) for k in changed}))
    return {experiment_key(e): e for e in experiments}


def codegen(search: Search, device: str) -> str:
    """Vectorized vs scalar C++ (CPU); Triton vs the C++ backend (GPU repros). Returns the code
    path the failure is known to need: "vectorized", "triton" or "any"."""
    if device == "cpu":
        if search.probe(SCALAR):
            search.find("codegen", "fails only with the vectorized C++ path (cppvec): the scalar C++ code passes",
                        SCALAR)
            return "vectorized"
        return "any"
    if search.probe(ON_CPU):
        search.find("codegen", f"fails only on {device} (Triton): the same graph compiled for the CPU (scalar C++) "
                    "passes", ON_CPU)
        return "triton"
    return "any"


def passes_off(search: Search) -> Experiment | None:
    present = [s for s in PASS_SUBSYSTEMS if search.calls(s)]
    return Experiment("graph passes off", disable={s: ALL for s in present}) if present else None


def all_aten(search: Search) -> Experiment | None:
    return search.experiment("every node falls back to ATen", disable={LOWERINGS: ALL}) \
        if search.calls(LOWERINGS) else None


def fallback(search: Search, names: list) -> Experiment:
    return search.experiment(f"ATen fallback: {', '.join(names)}", disable={LOWERINGS: names})


def lone_fallback(search: Search) -> Experiment | None:
    """The one lowered node falling back: what `lowerings` names when every fallback makes it pass."""
    names = search.calls(LOWERINGS)
    return fallback(search, names) if len(names) == 1 else None


def passes(search: Search) -> bool:
    """Pre-grad, joint-graph and post-grad passes: off together, then per subsystem, then by name."""
    present = [s for s in PASS_SUBSYSTEMS if search.calls(s)]
    if not present or not search.probe(passes_off(search)):
        return False
    found = False
    for subsystem in present:
        if not search.fixes(Experiment(f"{subsystem} off", disable={subsystem: ALL})):
            continue
        names = search.calls(subsystem)
        needed = minimal_set(names, lambda ns, s=subsystem: search.fixes(Experiment(f"{s} off: {', '.join(ns)}",
                                                                                    disable={s: ns})))
        applied = search.recorded["calls"][subsystem]
        where = [i for i, name in enumerate(applied) if name in needed]
        search.find("pass", f"{subsystem}: skipping {' + '.join(needed)} makes it pass",
                    Experiment(f"{subsystem} off: {', '.join(needed)}", disable={subsystem: needed}),
                    subsystem=subsystem, passes=needed, applications=where)
        found = True
    if not found:
        search.find("pass", f"needs passes of several subsystems ({', '.join(present)}); none alone",
                    Experiment("graph passes off", disable={s: ALL for s in present}))
    return True


def fusion(search: Search, device: str, path: str) -> bool:
    """Does it need nodes to share a kernel? Which producer must be fused into which consumer?

    On the CPU, a kernel of its own can change the code path too: a node that read a strided
    input in a scalar kernel reads a contiguous buffer and vectorizes. So when keeping nodes
    apart makes it pass, the same is tried with vectorization off; if it fails again, the bug
    needs the scalar C++ path, not fusion, and later experiments keep vectorization off."""
    apart = NO_FUSION
    if not search.probe(apart):
        return False
    if device == "cpu" and path != "vectorized":
        scalar_apart = Experiment("no fusion, scalar C++", config=dict(NO_VECTORIZATION), apart=ALL)
        if not search.fixes(scalar_apart):
            search.base = dict(NO_VECTORIZATION)
            search.find("codegen", "fails only with the scalar C++ path: with every node in a kernel of its own the "
                        "kernels vectorize and it passes; kept scalar, it fails again (not a fusion bug)", apart,
                        control=search.run(scalar_apart).to_json())
            return False
    nodes = search.nodes()
    producers = [n for n, info in nodes.items() if info["users"]]
    if not producers:
        search.find("fusion", "needs fusion (every node in its own kernel passes)", Experiment("no fusion", apart=ALL))
        return True
    needed = minimal_set(producers, lambda ns: search.fixes(Experiment(f"kept apart: {', '.join(ns)}",
                                                                       apart=tuple(ns))))
    pairs = [[p, u] for p in needed for u in nodes[p]["users"]]
    shown = ", ".join(f"{p} ({short(nodes[p]['target'])}) -> {u} ({short(nodes[u]['target'])})"
                      for p, u in pairs if u in nodes)
    search.find("fusion", f"needs fusion: fails only when {shown} share a kernel; keeping "
                f"{' and '.join(needed)} in a kernel of its own makes it pass",
                Experiment(f"kept apart: {', '.join(needed)}", apart=tuple(needed)), pairs=pairs)
    return True


BLAMED_CODE = {"vectorized": "the vectorized C++ code printed for it", "scalar": "the scalar C++ code printed for it",
               "triton": "the Triton code printed for it",
               "any": "its lowering or the code generated for it (on every code path tried)"}


def lowerings(search: Search, path: str) -> bool:
    """Which node's lowering (or the code generated for it): fall single nodes back to ATen."""
    names = search.calls(LOWERINGS)
    if not names or not search.probe(all_aten(search)):
        return False
    needed = minimal_set(names, lambda ns: search.fixes(fallback(search, ns)))
    nodes = search.nodes()
    shown = ", ".join(f"{n} ({short(nodes.get(n, {}).get('target', '?'))})" for n in needed)
    search.find("lowering", f"falling back {shown} to ATen makes it pass: {BLAMED_CODE[path]} is wrong",
                fallback(search, needed), nodes=needed, targets=[nodes.get(n, {}).get("target") for n in needed])
    return True


def decompositions(search: Search) -> bool:
    """Which decomposition, by op: skip them all, then halve the ops the trace decomposed."""
    names = search.calls(DECOMPOSITION)
    if not names or not search.probe(search.experiment("no decompositions", disable={DECOMPOSITION: ALL})):
        return False
    needed = minimal_set(names, lambda ns: search.fixes(search.experiment(f"not decomposed: {', '.join(ns)}",
                                                                          disable={DECOMPOSITION: ns})))
    search.find("decomposition", f"skipping the decomposition of {' + '.join(needed)} makes it pass",
                search.experiment(f"not decomposed: {', '.join(needed)}", disable={DECOMPOSITION: needed}),
                ops=needed)
    return True


def short(target: str) -> str:
    """`aten.sigmoid.default` for `torch.ops.aten.sigmoid.default`-like strings."""
    return target.replace("torch.ops.", "")
