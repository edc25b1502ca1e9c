"""Which part of the compiler a minimal repro needs in order to fail (the search behind `minify bisect`).

A verified repro says *what* fails; a compiler engineer next asks *where*: which
decomposition, graph pass, node lowering, fusion, code path or config flag. Each question is
an experiment (compiler/subsystems.py) run on the repro's minimal graph in a warm worker
(minifier/blame/probe_worker.py): a switch "makes it go away" when the repro's oracle then says
`pass`. The search spends few compiles: one recording run lists what the compiler applied
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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from compiler.subsystems import (ALL, DECOMPOSITION, LOWERINGS, NO_VECTORIZATION, PASS_SUBSYSTEMS, Experiment,
                                 config_defaults)
from minifier.blame.ahead import AheadRuns
from minifier.blame.probe_worker import BlameWorker, WorkerDied
from minifier.workers.worker import POISONING
from repro.manifest import ReproFolderError, read_manifest

BLAME_FILE = "blame.json"
CRASHING = ("crash@", "hang@")
# Scalar: the vector C++ path first asks which ISAs build and load, eleven checks that each start a
# Python importing torch on torch 2.11-2.12 (43-56 s in a fresh process on the H200 host);
# scalar C++ needs none of them, and any correct CPU code tells a Triton bug from the rest.
ON_CPU = Experiment("scalar C++ backend instead of Triton", config={"cpp.vec_isa_ok": False}, device="cpu")
SCALAR = Experiment("scalar C++ (no vectorization)", config=dict(NO_VECTORIZATION))
NO_FUSION = Experiment("no fusion (every node its own kernel)", apart=ALL)


def experiment_key(experiment: Experiment) -> str:
    """What an experiment switches: equal keys, equal verdicts (the search's cache key)."""
    return json.dumps(experiment.describe(), sort_keys=True, default=str)


@dataclass
class Run:
    """One experiment's verdict: pass (it went away), reproduces (same failure), or something else."""

    experiment: Experiment
    verdict: str  # pass | reproduces | other_failure | invalid | unavailable | error
    answer: dict

    def to_json(self) -> dict:
        d = {**self.experiment.describe(), "verdict": self.verdict}
        if self.verdict not in ("pass", "reproduces"):
            d["outcome"] = self.answer.get("signature") or self.answer.get("message", "")
        return d


def judge(answer: dict, expected: str) -> str:
    status = answer.get("status")
    if status == "fail":
        return "reproduces" if answer.get("signature") == expected else "other_failure"
    return status if status in ("pass", "invalid", "unavailable") else "error"


def minimal_set(items: list, fixes: Callable[[list], bool], base: tuple = ()) -> list:
    """A small subset S of `items` with fixes(base + S), given fixes(base + items): split in
    halves, keep a half that fixes it alone, else narrow each half with the other held fixed."""
    if len(items) <= 1:
        return list(items)
    half = len(items) // 2
    first, second = items[:half], items[half:]
    if fixes([*base, *first]):
        return minimal_set(first, fixes, base)
    if fixes([*base, *second]):
        return minimal_set(second, fixes, base)
    needed_first = minimal_set(first, fixes, (*base, *second))
    return needed_first + minimal_set(second, fixes, (*base, *needed_first))


@dataclass
class Search:
    """The experiments on one repro, with their verdicts cached by what they switch."""

    worker: BlameWorker
    manifest: dict
    say: Callable[[str], None] = print
    runs: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    ruled_out: list = field(default_factory=list)
    cache: dict = field(default_factory=dict)
    recorded: dict = field(default_factory=dict)  # the baseline's answer: calls, nodes
    ahead: AheadRuns | None = None  # experiments already running in processes of their own
    early: dict = field(default_factory=dict)  # answers run before the search asked (run_early)
    base: dict = field(default_factory=dict)  # config every later experiment keeps (the failing code path)

    def experiment(self, name: str, config: dict | None = None, **switches) -> Experiment:
        """An experiment that keeps the failing code path (`base`) while switching something else."""
        return Experiment(name, config={**self.base, **(config or {})}, **switches)

    def run(self, experiment: Experiment) -> Run:
        key = experiment_key(experiment)
        if key not in self.cache or experiment.record:
            answer = self.early.pop(key, None) or (self.ahead.take(key) if self.ahead and not experiment.record
                                                   else None) or self.worker.run(experiment)
            run = Run(experiment, judge(answer, self.manifest["signature"]), answer)
            self.say(f"  {experiment.name}: {run.verdict}")
            self.runs.append(run)
            self.cache[key] = run
        return self.cache[key]

    def run_early(self, experiments: list) -> None:
        """Run now what the search asks next anyway, while the experiments started ahead build
        their kernels: the answers wait in `early` until asked for (None: not asked)."""
        for experiment in filter(None, experiments):
            if (key := experiment_key(experiment)) not in self.cache and key not in self.early:
                self.early[key] = self.worker.run(experiment)

    def fixes(self, experiment: Experiment) -> bool:
        return self.run(experiment).verdict == "pass"

    def probe(self, experiment: Experiment) -> bool:
        """A whole-subsystem switch; a failure that stays is recorded as ruled out."""
        run = self.run(experiment)
        if run.verdict != "pass":
            self.ruled_out.append({"what": experiment.name, **run.to_json()})
        return run.verdict == "pass"

    def find(self, what: str, finding: str, experiment: Experiment, **extra) -> None:
        run = self.run(experiment)
        self.findings.append({"what": what, "finding": finding, "run": run.to_json(), **extra})
        self.say(f"  -> {what}: {finding}")

    def calls(self, subsystem: str) -> list[str]:
        """Distinct names of a subsystem's applications in the baseline compile, in order."""
        return list(dict.fromkeys(self.recorded.get("calls", {}).get(subsystem, [])))

    def nodes(self) -> dict:
        return self.recorded.get("nodes", {})


def blame(repro_dir: Path, say: Callable[[str], None] = print, zygote=None, probes=None) -> list[dict]:
    """Run the blame search on a verified repro folder; write REPRO_DIR/blame.json; return findings.
    With `zygote` (minifier.workers.zygote), its probe processes are forked from it; with
    `probes` (minifier.blame.ready.ReadyProbes), they are taken warm from there."""
    return blame_report(repro_dir, say, zygote, probes)["blame"]


def blame_report(repro_dir: Path, say: Callable[[str], None] = print, zygote=None, probes=None) -> dict:
    """The whole blame.json content: findings, probes that ruled parts out, every run."""
    start = time.perf_counter()
    manifest = read_manifest(repro_dir)
    stage = manifest.get("stage", "inductor")
    # A crash kills the worker; a CUDA device-side assert spoils its context for every later run.
    isolate = manifest["signature"].startswith(CRASHING) or any(m in manifest["signature"] for m in POISONING)
    timeout = 60.0 if isolate else 300.0
    # each compiles new kernels: started beside the baseline, each in a process of its own
    device = manifest.get("device", "cpu")
    ready = (lambda experiment_device=None: probes.take(experiment_device or device)) if probes else None
    ahead = AheadRuns(repro_dir, stage, first_experiments(manifest), timeout, zygote, ready) \
        if stage == "inductor" else None
    with BlameWorker(repro_dir, stage, isolate=isolate, timeout=timeout, zygote=zygote, ready=ready) as worker:
        try:
            info = worker.start()
            search = Search(worker, manifest, say, ahead=ahead)
            reproduced = search_blame(search, stage, info)
        except WorkerDied as died:
            raise ReproFolderError(f"{repro_dir}: the blame worker could not load the repro "
                                   f"({died.answer.get('message')}): {worker.log_tail(500)}") from None
        finally:
            if ahead is not None:
                ahead.close()
        restarts = worker.restarts
    report = {"repro": str(repro_dir.resolve()), "signature": manifest["signature"], "stage": stage,
              "reproduced": reproduced, "blame": search.findings, "ruled_out": search.ruled_out,
              "runs": [{"name": r.experiment.name, **r.to_json(), "seconds": r.answer.get("seconds")}
                       for r in search.runs],
              "compiles": len(search.runs), "worker_restarts": restarts,
              "seconds": round(time.perf_counter() - start, 2)}
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
    if stage == "inductor" and search.ahead is not None and not search.worker.isolate:
        search.run_early([passes_off(search), NO_FUSION, all_aten(search)])  # cheap, each on cached kernels
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


def config_reverted(keys: list, defaults: dict) -> Experiment:
    return Experiment(f"script config reverted: {', '.join(keys)}", config={k: defaults[k] for k in keys})


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


def script_config(search: Search, defaults: dict) -> None:
    """Does the failure need the Inductor config the script changed? Which keys?"""
    if not defaults:
        return

    def reverted(keys: list) -> Experiment:
        return config_reverted(keys, defaults)

    keys = sorted(defaults)
    if not search.probe(reverted(keys)):
        return
    needed = minimal_set(keys, lambda ks: search.fixes(reverted(ks)))
    changed = {k: search.manifest["config"][k] for k in needed}
    search.find("config", f"needs the script's config {changed}: back at the defaults it passes", reverted(needed))


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
    needed = minimal_set(names, lambda ns: search.fixes(search.experiment(f"ATen fallback: {', '.join(ns)}",
                                                                          disable={LOWERINGS: ns})))
    nodes = search.nodes()
    shown = ", ".join(f"{n} ({short(nodes.get(n, {}).get('target', '?'))})" for n in needed)
    search.find("lowering", f"falling back {shown} to ATen makes it pass: {BLAMED_CODE[path]} is wrong",
                search.experiment(f"ATen fallback: {', '.join(needed)}", disable={LOWERINGS: needed}),
                nodes=needed, targets=[nodes.get(n, {}).get("target") for n in needed])
    return True


def config_flags(search: Search, flips: dict) -> bool:
    """Config flags that flip the verdict: all at once (one compile), then the minimal set."""
    flips = {k: v for k, v in flips.items() if k not in search.base}
    if not flips or not search.probe(search.experiment("config flags flipped", config=dict(flips))):
        return False
    keys = sorted(flips)
    needed = minimal_set(keys, lambda ks: search.fixes(search.experiment(f"config: {', '.join(ks)}",
                                                                         config={k: flips[k] for k in ks})))
    setting = {k: flips[k] for k in needed}
    search.find("config", f"setting {setting} makes it pass", search.experiment(f"config: {', '.join(needed)}",
                                                                               config=setting))
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


def partitioner(search: Search) -> bool:
    """The other switch of the decomposition stage that CompilerBisector knows: AOT's CSE."""
    no_cse = Experiment("AOTAutograd CSE off", config={"functorch.cse": False})
    if search.probe(no_cse):
        search.find("partitioner", "fails only with AOTAutograd's CSE on", no_cse)
        return True
    return False


def short(target: str) -> str:
    """`aten.sigmoid.default` for `torch.ops.aten.sigmoid.default`-like strings."""
    return target.replace("torch.ops.", "")
