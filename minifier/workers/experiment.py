"""One compiler experiment on a repro folder, as a worker job (the blame search's question).

The job names a verified repro folder and an experiment (compiler/subsystems.py: config
switches, subsystems off, nodes kept apart, a device); the worker rebuilds the repro from
repro.json (repro/runner.py) with the script's Inductor config and any planted bug applied
for this job alone, as `python repro.py` has them, compiles it under the experiment and
judges it with minify's oracle. Without an experiment the job answers what the search needs
to plan (`hello`). A warm worker answers them beside the evaluator's checks: nothing it sets
outlives the job.

What the compiler applied (the baseline's record) is appended to `record_file` as it happens,
one JSON line per entry: a compile that kills the worker must not take the record with it.
`retire` asks the worker to end after answering (a crash or a device assert spoils the
process: each such experiment gets a fresh one). Standard library only at import.
"""
from __future__ import annotations

import contextlib
import json
import time
from dataclasses import asdict, dataclass, fields

OP = "experiment"


@dataclass(frozen=True)
class ExperimentJob:
    folder: str  # the repro folder, absolute (a worker's cwd is its log folder)
    experiment: dict | None = None  # Experiment.to_dict(); None: the hello
    record_file: str | None = None  # where what was applied is streamed (JSON lines)
    stage: str = "inductor"  # the repro's stage: a worker's crash or hang is signed with it
    timeout: float | None = None  # seconds after which the run is a hang (None: the pool's)
    retire: bool = False  # the worker ends after answering
    op: str = OP

    def to_dict(self) -> dict:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @staticmethod
    def from_dict(wire: dict) -> "ExperimentJob":
        return ExperimentJob(**{f.name: wire[f.name] for f in fields(ExperimentJob) if f.name in wire})


def read_record(path: str | None) -> dict:
    """The record streamed to `path`: {"calls": subsystem -> names, "nodes": name -> info}."""
    record: dict = {"calls": {}, "nodes": {}}
    with contextlib.suppress(OSError):
        with open(path or "") as f:
            for line in f:
                with contextlib.suppress(ValueError):  # a line cut short by a crash
                    entry = json.loads(line)
                    if entry.get("partial") == "call":
                        record["calls"].setdefault(entry["subsystem"], []).append(entry["name"])
                    elif entry.get("partial") == "node":
                        record["nodes"][entry["name"]] = entry["info"]
    return record


def answer(job: ExperimentJob) -> dict:
    """The worker's answer to one experiment job."""
    from pathlib import Path

    from compiler.subsystems import Experiment, asks_vec_isa, config_defaults, forget_vec_isa
    from repro import runner

    defaults = config_defaults()
    module = runner.load(Path(job.folder), plant=False)  # config and bug: for this job alone (planted)
    if job.experiment is None:
        return hello(module, defaults)
    experiment = Experiment.from_dict(job.experiment)
    if asks_vec_isa(experiment.config):  # a warm worker listed its ISAs already: again, then it ends
        forget_vec_isa()
        return {**answer_planted(job, module, experiment), "retire": True}
    return answer_planted(job, module, experiment)


def answer_planted(job: ExperimentJob, module, experiment) -> dict:
    """`experiment` run with the repro's config set and bug planted."""
    from pathlib import Path

    from repro import runner

    try:
        injections = known_injections(module.manifest)
    except ValueError:  # a bug planted by code of its own: as repro.py plants it, for good
        return {**run_experiment(runner.load(Path(job.folder)), experiment, job.record_file), "retire": True}
    with planted(module.manifest, injections):
        return run_experiment(module, experiment, job.record_file)


def known_injections(manifest: dict) -> list:
    """The planted bugs as minify's injection API plants (and removes) them; ValueError for a
    target it does not know (repro.json's injection_source then plants it)."""
    from compiler import inject

    return [inject.Injection.from_dict(d) for d in manifest.get("injections") or []]


@contextlib.contextmanager
def planted(manifest: dict, injections: list):
    """The script's Inductor config set (repro.py's config lines, as a patch) and its bugs
    planted, undone after: the worker answers other jobs next."""
    import torch._inductor.config

    from compiler import inject

    with torch._inductor.config.patch(dict(manifest.get("config") or {})), inject.injected(*injections):
        yield


def hello(module, defaults: dict) -> dict:
    """What the search needs to plan experiments: the device, available flips, the script's defaults."""
    from compiler.subsystems import known_flips

    device = module.CONTEXT.get("device", "cpu")
    return {"status": "ready", "device": device, "flips": known_flips(device),
            "script_defaults": {k: defaults.get(k) for k in module.manifest.get("config") or {}}}


def streaming_record(path: str):
    """A Record that also appends each entry to `path` as it happens."""
    from compiler.subsystems import Record

    stream = open(path, "a")

    class StreamingRecord(Record):
        def add_call(self, subsystem: str, name: str) -> None:
            super().add_call(subsystem, name)
            self.say({"partial": "call", "subsystem": subsystem, "name": name})

        def add_node(self, name: str, info: dict) -> None:
            super().add_node(name, info)
            self.say({"partial": "node", "name": name, "info": info})

        @staticmethod
        def say(entry: dict) -> None:
            stream.write(json.dumps(entry, default=str) + "\n")
            stream.flush()

    return StreamingRecord(), stream


def run_experiment(module, experiment, record_file: str | None) -> dict:
    """One compile under `experiment`, judged by the repro's oracle."""
    from compiler.subsystems import Unavailable, applied
    from repro import runner

    record, stream = streaming_record(record_file) if experiment.record and record_file else (None, None)
    start = time.perf_counter()
    try:
        with applied(experiment, record) as config:
            outcome = runner.run_check(module.Repro, module.make_inputs, module.COMPILE, module.CONTEXT, module.CHECK,
                                       device=experiment.device, config=config)
    except Unavailable as exc:
        return {"status": "unavailable", "message": str(exc)}
    except Exception as exc:  # the check catches compiler failures: this is the setup failing
        return {"status": "error", "message": f"{type(exc).__name__}: {exc}"[:500]}
    finally:
        if stream is not None:
            stream.close()
    answer = {k: getattr(outcome, k) for k in ("status", "kind", "signature", "message")}
    answer["seconds"] = round(time.perf_counter() - start, 2)
    return answer
