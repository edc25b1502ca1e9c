"""An evaluator is made for one question and shares what it learns; a job and its cache key are
one type; passes reach the evaluator only through the budget. No compiler needed: the pool here
answers every job at once and counts what it was sent."""
import hashlib
import json
from concurrent.futures import Future
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
import torch
import torch.fx as fx

from compiler.stages import CompileSetup, CompileSpec
from minifier.reduce.budget import Budget, Guarded
from minifier.workers.evaluate import Evaluator
from minifier.workers.judge import PASSES, REPRODUCES
from minifier.workers.answer import Answer
from minifier.workers.job import Job


class AnsweringPool:
    """Answers each job with `answer`; keeps the jobs it was sent."""

    size, timeout = 1, 600.0

    def __init__(self, answer: dict):
        self.answer, self.sent = answer, []

    def submit(self, job: dict) -> Future:
        self.sent.append(job)
        future = Future()
        future.set_result(dict(self.answer))
        return future


def _graph() -> fx.GraphModule:
    gm = fx.symbolic_trace(lambda x, y: torch.relu(x * y))
    for p in gm.graph.nodes:
        if p.op == "placeholder":
            p.meta["value"] = p.name
    return gm


def _evaluator(answer: dict) -> Evaluator:
    return Evaluator(AnsweringPool(answer), Path("/nowhere"), CompileSetup(CompileSpec(), []), signature="accuracy@inductor")


FAILS = {"status": "fail", "kind": "accuracy", "signature": "accuracy@inductor", "seconds": 0.5}


def test_evaluators_for_other_bugs_share_the_cache_and_the_counters():
    ev, gm = _evaluator(FAILS), _graph()
    assert ev.test(gm) == REPRODUCES
    other = ev.for_bug("inductor", "compile_error@inductor", culprit="relu")
    assert other.test(gm) == PASSES  # its own question, answered from the shared cache
    assert len(ev.pool.sent) == 1 and ev.compiles == other.compiles == 1
    assert ev.cache_hits == other.cache_hits == 1 and ev.log is other.log and ev.cache is other.cache
    other.for_bug("aot_eager", "accuracy@aot_eager").outcomes([gm])  # another stage: a new job, counted once
    assert len(ev.pool.sent) == 2 and ev.compiles == 2 and len(ev.log) == 2
    assert (ev.stage, ev.signature, ev.culprit) == ("inductor", "accuracy@inductor", None)  # never retargeted


def test_an_evaluator_cannot_be_retargeted_from_outside():
    ev = _evaluator(FAILS)
    with pytest.raises(FrozenInstanceError):
        ev.signature = "another"
    with pytest.raises(TypeError):
        ev.for_bug("inductor", "accuracy@inductor", atol=1.0)  # for_bug fixes the question, not the oracle
    limited = ev.for_bug("inductor", "accuracy@inductor", timeout=7.0, validate=lambda gm: "too big")
    assert limited.test(_graph()) == "invalid" and ev.rejected == 1 and not ev.pool.sent
    assert limited.for_bug("aot_eager", "x").timeout == 7.0  # limits carry on to the next question
    assert ev.timeout is None and ev.validate is None


def test_a_job_round_trips_and_equal_questions_have_equal_keys():
    ev, gm = _evaluator(FAILS), _graph()
    job = ev.job(gm, "inductor", repeat=1, runs=3)
    assert Job.from_dict(job.to_dict()) == job
    assert job.to_dict()["inputs"] == ["x", "y"] and "timeout" not in job.to_dict()
    same = ev.job(_graph(), "inductor", repeat=1, runs=3, timeout=5.0, kernel_threads=2)  # how, not what
    assert same != job and same.key() == job.key()
    assert ev.job(gm, "aot_eager").key() != ev.job(gm, "inductor").key()
    assert ev.job(gm, op="kernels").key() != ev.job(gm).key()
    assert ev.job(gm, runs=3).key() != ev.job(gm).key()


def test_the_key_is_the_one_answers_were_saved_under():
    """Checkpoints keep answers by key: a Job's key is the hash the evaluator always used."""
    job = _evaluator(FAILS).job(_graph(), repeat=0, op="divergence", node_names=["mul", "relu"])
    wire = job.to_dict()
    fields = ("source", "inputs", "stage", "spec", "injections", "atol", "rtol", "strict", "context", "repeat", "op")
    blob = json.dumps({k: wire.get(k) for k in fields}, sort_keys=True, default=str)
    assert job.key() == hashlib.sha256(blob.encode()).hexdigest()


def test_passes_reach_the_evaluator_only_through_guarded_methods():
    ev, gm = _evaluator(FAILS), _graph()
    guard = Guarded(ev, Budget(max_compiles=5), lambda g: (len(g.graph.nodes),), gm)
    assert guard.test(gm) == REPRODUCES and guard.budget.spent == 1
    for name in ("signature", "repeats", "prefetch", "pool"):  # would spend or leak compiles unbudgeted
        with pytest.raises(AttributeError, match="Guarded"):
            getattr(guard, name)


def test_the_hang_limit_of_a_check_does_not_cut_a_divergence_job_short():
    """Once a graph's runs are timed, a check ten times slower is a hang. A divergence or kernels
    job is several compiles and runs of the whole graph (chunks of stored values, the inside
    of a kernel): it gets the pool's limit, or a long one would be killed as a hang and its
    worker replaced."""
    ev, gm = _evaluator(FAILS), _graph()
    ev.test(gm)  # 0.5 s: checks from now on are stuck after a minute
    assert ev.job(gm).timeout == 60.0
    assert ev.job(gm, op="divergence").timeout is None and ev.job(gm, op="kernels").timeout is None
    assert ev.for_bug("inductor", "x", timeout=7.0).job(gm, op="divergence").timeout is None


def test_a_graphs_first_check_may_take_as_long_as_several_of_the_scripts_runs():
    """Under the fixed 300 s candidate limit, a model with 10 GB of activations had its first
    piece checks called hangs and its workers replaced, over and over (issue 25)."""
    from minifier.workers.ask import first_check_limit

    assert first_check_limit(300.0, 5.0, 1800.0) == 300.0  # a small script: a candidate's limit
    assert first_check_limit(300.0, 62.0, 1800.0) == 620.0  # that model's capture: ten of its runs
    assert first_check_limit(300.0, 1800.0, 1800.0) == 1800.0  # a hanging script: never past its own limit


def test_an_answer_reads_its_wire_form_and_gives_it_back():
    """The evaluator reads a worker's answer through Answer: the fields that decide a verdict
    and what it cost by name, the rest kept as they came (the cache and checkpoints hold dicts)."""
    wire = {"status": "fail", "kind": "accuracy", "signature": "accuracy@inductor|values", "message": "out differs",
            "metrics": [{"ok": False}], "wall": 0.5, "runs": [{"status": "fail"}, {"status": "pass"}]}
    answer = Answer.from_wire(wire)
    assert answer.failed and answer.signature == "accuracy@inductor|values" and answer.to_wire() == wire
    assert answer.runs == wire["runs"] and answer.extra["metrics"] == [{"ok": False}]
    assert answer.compiles_spent == 1 and answer.duration == 0.5
    assert Answer.from_wire({"status": "ok", "compiles": 0}).compiles_spent == 0  # a kernels job builds nothing
    assert Answer.from_wire({"status": "fail", "kind": "eager_error"}).compiles_spent == 0
    assert Answer.from_wire({"status": "pass"}).runs == [{}]


def test_asking_and_judging_are_separate_types():
    """An Asker sends questions and counts what they cost, and judges nothing; a Judge reads an
    Answer, and asks nothing; an Evaluator is an Asker judging with its Judge, for_bug's too."""
    from minifier.workers.ask import Asker
    from minifier.workers.judge import Judge

    gm = _graph()
    asker = Asker(AnsweringPool(FAILS), Path("/nowhere"), CompileSetup(CompileSpec(), []))
    assert Answer.from_wire(asker.outcomes([gm])[0]).failed and asker.compiles == 1
    assert not hasattr(asker, "verdict") and not hasattr(Judge("x"), "outcomes")
    assert Judge("accuracy@inductor").verdict(Answer.from_wire(FAILS), gm) == REPRODUCES
    assert Judge("accuracy@inductor", culprit="absent").verdict(FAILS, gm) == PASSES
    ev = _evaluator(FAILS)
    other = ev.for_bug("inductor", "accuracy@inductor", culprit="relu")
    assert isinstance(other, Asker) and other.judge == Judge("accuracy@inductor", "relu")
    assert other.counters is ev.counters and other.cache is ev.cache


def test_the_tries_of_a_process_ending_failure_share_one_compile_store_and_keep_their_keys():
    from compiler.inject import Injection
    from minifier.search.bugs import speculative_checks

    gm = _graph()
    crash = Evaluator(AnsweringPool(FAILS), Path("/case"), CompileSetup(CompileSpec(), []),
                      signature="crash@inductor|SIGABRT")
    questions = speculative_checks(gm, 3, crash.signature, {})
    tries = [crash.job(q.gm, q.stage, q.repeat, **(q.how or {})) for q in questions if q.stage is None]
    assert len(tries) == 3 and all(j.share_compile for j in tries)
    stores = {j.compile_store() for j in tries}
    assert len(stores) == 1 and stores.pop().startswith("/case/compiles/")
    as_repeats_asks = [crash.job(gm, None, j.repeat, runs=j.runs).key() for j in tries]  # Evaluator.repeats
    assert [j.key() for j in tries] == as_repeats_asks
    planted = Evaluator(AnsweringPool(FAILS), Path("/case"), CompileSetup(CompileSpec(), [Injection("relu").to_dict()]),
                        signature="crash@inductor|SIGABRT")
    assert planted.job(gm, share_compile=True).compile_store() != crash.job(gm, share_compile=True).compile_store()
    accuracy = [q for q in speculative_checks(gm, 3, "accuracy@inductor", {}) if q.stage is None]
    assert not any((q.how or {}).get("share_compile") for q in accuracy)  # one job, one compile: nothing to share
    assert crash.job(gm).compile_store() is None
