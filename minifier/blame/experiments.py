"""One repro's blame experiments: each a worker job (or taken from one started ahead), judged
against the repro's signature, and cached by what it switches."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Callable

from compiler.subsystems import Experiment
from minifier.blame.ahead import AheadRuns
from minifier.blame.jobs import BlameJobs


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



@dataclass
class Search:
    """The experiments on one repro, with their verdicts cached by what they switch."""

    worker: BlameJobs
    manifest: dict
    say: Callable[[str], None] = print
    runs: list = field(default_factory=list)
    findings: list = field(default_factory=list)
    ruled_out: list = field(default_factory=list)
    cache: dict = field(default_factory=dict)
    recorded: dict = field(default_factory=dict)  # the baseline's answer: calls, nodes
    ahead: AheadRuns | None = None  # experiments already running in processes of their own
    early: dict = field(default_factory=dict)  # experiments asked before the search asked (run_early)
    base: dict = field(default_factory=dict)  # config every later experiment keeps (the failing code path)

    def experiment(self, name: str, config: dict | None = None, **switches) -> Experiment:
        """An experiment that keeps the failing code path (`base`) while switching something else."""
        return Experiment(name, config={**self.base, **(config or {})}, **switches)

    def run(self, experiment: Experiment) -> Run:
        key = experiment_key(experiment)
        if key not in self.cache or experiment.record:
            early = self.early.pop(key, None)
            answer = (early.result() if early is not None else None) or \
                (self.ahead.take(key) if self.ahead and not experiment.record else None) or self.worker.run(experiment)
            run = Run(experiment, judge(answer, self.manifest["signature"]), answer)
            self.say(f"  {experiment.name}: {run.verdict}")
            self.runs.append(run)
            self.cache[key] = run
        return self.cache[key]

    def run_early(self, experiments: list) -> None:
        """Ask now what the search asks next anyway, while the experiments started ahead build
        their kernels: the answers wait in `early` until asked for (None: not asked)."""
        for experiment in filter(None, experiments):
            if (key := experiment_key(experiment)) not in self.cache and key not in self.early:
                self.early[key] = self.worker.submit(experiment)

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
