"""A candidate only reproduces when it shows the same bug: same signature, and for accuracy
the same first divergent node. Real workers, real Inductor."""
import pytest
import torch
import torch.fx as fx

from compiler.inject import Injection
from compiler.stages import CompileSetup, CompileSpec
from compiler.stages import CompileSpec
from minifier.graph.edit import rebuild
from minifier.run.pipeline import record_values
from minifier.workers.evaluate import Evaluator
from minifier.workers.judge import PASSES, REPRODUCES
from minifier.workers.pool import WorkerPool


def _case(fn, inputs, folder):
    gm = fx.symbolic_trace(fn)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    values = record_values(gm, inputs)
    torch.save(values, folder / "values.pt")
    return gm, values


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    pool = WorkerPool(1, tmp_path_factory.mktemp("logs"))
    yield pool
    pool.close()


@pytest.mark.slow
def test_a_different_exception_does_not_reproduce(pool, tmp_path):
    def f(x):
        return torch.relu(x) + torch.sign(x)

    gm, values = _case(f, [torch.randn(16)], tmp_path)
    spec = CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "compile_error"})
    ev = Evaluator(pool, tmp_path, CompileSetup(spec, [Injection("sign", template="undefined_fn({x})").to_dict()]), signature="")
    relu_only = rebuild(gm, cut={"sign"}, values=values)
    sign_only = rebuild(gm, cut={"relu"}, values=values)
    first, second = ev.outcomes([relu_only, sign_only])
    assert first["kind"] == second["kind"] == "compile_error"
    assert first["signature"] != second["signature"]
    ev = ev.for_bug("inductor", first["signature"])
    assert ev.test(relu_only) == REPRODUCES
    assert ev.test(sign_only) == PASSES


def test_accuracy_bug_that_moved_to_another_op_does_not_reproduce(pool, tmp_path):
    def f(x, y):
        return torch.relu(x) * 2 + torch.log1p(y.abs())

    gm, values = _case(f, [torch.randn(16), torch.randn(16)], tmp_path)
    spec = CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "accuracy",
                               "cpp.inject_log1p_bug_TESTING_ONLY": "accuracy"})
    ev = Evaluator(pool, tmp_path, CompileSetup(spec, []), signature="accuracy@inductor", culprit="relu")
    assert ev.test(rebuild(gm, cut={"log1p"}, values=values)) == REPRODUCES
    assert ev.test(rebuild(gm, cut={"relu"}, values=values)) == PASSES


@pytest.mark.slow
def test_workers_killed_by_crashes_are_replaced_and_answers_stay_right(tmp_path):
    def f(x):
        return torch.relu(x) * 2

    gm, values = _case(f, [torch.randn(4096)], tmp_path)
    pool = WorkerPool(1, tmp_path / "logs")
    try:
        abort = Injection("relu", "runtime_error", paths=("cpp", "cppvec"))  # `throw 1` in OpenMP: SIGABRT
        crashing = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), [abort.to_dict()]), signature="")
        honest = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), []), signature="")
        for _ in range(3):  # the first replacement is started cold, later ones are the warmed spare
            answer = crashing.outcomes([gm])[0]
            crashing.cache.clear()
            assert answer["kind"] == "crash" and "SIGABRT" in answer["signature"], answer
            assert honest.outcomes([gm])[0]["status"] == "pass"
            honest.cache.clear()
        assert pool.restarts == 3
        # Every worker that answered had warmed up first, the cold replacement too (at its start,
        # not at its first job: on a GPU that is seconds of CUDA start-up off the search's path)
        answered = {row["worker"] for row in pool.timeline if row["op"] == "check"}
        assert answered <= {row["worker"] for row in pool.timeline if row["op"] == "warmup"}, pool.timeline
    finally:
        pool.close()


def test_a_prefetched_check_on_two_kernel_threads_answers_the_plain_question(pool, tmp_path):
    """How a check is run (kernels built on two threads) is not what is asked: the plain
    question takes the prefetched answer, which is the answer a plain check gives."""
    def f(x, y):
        return torch.relu(x).exp() * 2 + torch.tanh(y.abs()).sum()

    gm, values = _case(f, [torch.randn(64), torch.randn(64)], tmp_path)
    spec = CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"})
    ev = Evaluator(pool, tmp_path, CompileSetup(spec, []), signature="accuracy@inductor")
    ev.prefetch([(gm, "inductor", 0, {"kernel_threads": 2})])
    threaded = ev.outcomes([gm], stage="inductor")[0]
    assert ev.compiles == 1 and ev.cache_hits == 0
    plain = ev.outcomes([gm], stage="inductor", repeat=1)[0]
    assert threaded["status"] == plain["status"] == "fail"
    assert threaded["signature"] == plain["signature"] == "accuracy@inductor"
    assert threaded["metrics"] == plain["metrics"]


def test_divergence_is_found_in_a_graph_that_also_writes_to_its_inputs(pool, tmp_path):
    """BatchNorm in training updates its running stats in place: the oracle then names the
    outputs out['out'][i] beside the written inputs. Found in a user's training loop, where
    this raised instead of finding the divergent node."""
    from minifier.localize.divergence import find_divergence

    def f(x, running_mean):
        running_mean.mul_(0.9).add_(x.mean(0) * 0.1)
        h = x * 3
        return torch.sigmoid(h) + 1

    gm, values = _case(f, [torch.randn(8, 16), torch.zeros(16)], tmp_path)
    ev = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), [Injection("sigmoid").to_dict()]), signature="accuracy@inductor")
    divergence = find_divergence(gm, ev, values)
    assert divergence is not None and divergence.roots == ["sigmoid"]


def test_a_graph_captured_under_autocast_is_checked_under_autocast(pool, tmp_path):
    """bf16 @ fp32 only runs under autocast, as it did in the user's script: the workers
    re-enter the modes the graph ran under (found in a user's autocast attention)."""
    from compiler.context import graph_modes

    def f(p, v):
        return torch.nn.functional.gelu(p @ v).float()

    inputs = [torch.randn(4, 8).bfloat16(), torch.randn(8, 8)]
    context = {"autocast": {"dtype": "bfloat16"}}
    gm = fx.symbolic_trace(f)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    with graph_modes(context, True, inputs, only_autocast=True):
        values = record_values(gm, inputs)
    assert values["matmul"].dtype == torch.bfloat16
    torch.save(values, tmp_path / "values.pt")
    bug = [Injection("erf").to_dict()]
    plain = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), bug), signature="accuracy@inductor")
    assert plain.outcomes([gm])[0]["status"] == "invalid"  # eager itself cannot run it
    ev = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), bug, context), signature="accuracy@inductor")
    assert ev.test(gm) == REPRODUCES


def test_repeats_compile_once_and_judge_every_run(pool, tmp_path):
    """The k-of-k rule runs one compiled graph k times; each run is judged on its own."""
    def f(x):
        return torch.relu(x) * 2

    gm, values = _case(f, [torch.randn(64)], tmp_path)
    ev = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), [Injection("relu").to_dict()]), signature="accuracy@inductor")
    answers = ev.repeats(gm, 3)
    assert [ev.verdict(a) for a in answers] == [REPRODUCES] * 3
    assert all(a["seconds"] > 0 for a in answers)
    assert ev.compiles == 1


@pytest.mark.slow
def test_repeats_of_a_crash_each_take_a_worker_of_their_own(tmp_path):
    """A crash kills the worker in the first run: the other tries are jobs of their own, so a
    crash is still seen k times in k processes, not counted three times from one."""
    def f(x):
        return torch.relu(x) * 2

    gm, values = _case(f, [torch.randn(4096)], tmp_path)
    pool = WorkerPool(1, tmp_path / "logs")
    try:
        abort = Injection("relu", "runtime_error", paths=("cpp", "cppvec"))
        ev = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), [abort.to_dict()]), signature="")
        answers = ev.repeats(gm, 3)
        assert [a["kind"] for a in answers] == ["crash"] * 3
        assert pool.restarts == 3
    finally:
        pool.close()


def _fused(x, w):
    h = torch.sigmoid(x @ w)
    g = torch.relu(h * 3) + 1  # one fused kernel: mul, relu, add; only add's value is stored
    return torch.tanh(g @ w)


def test_a_bug_inside_a_fused_kernel_is_pinned_to_its_op(pool, tmp_path):
    """Found from the values Inductor stores anyway (their kernels come from the cache), then
    inside the first wrong kernel (minifier.localize.divergence)."""
    from minifier.localize.divergence import find_divergence

    gm, values = _case(_fused, [torch.randn(8, 16), torch.randn(16, 16)], tmp_path)
    ev = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), [Injection("relu").to_dict()]), signature="accuracy@inductor")
    divergence = find_divergence(gm, ev, values)
    assert divergence is not None and divergence.how == "stored"
    assert divergence.roots == ["relu"]
    assert divergence.metrics["mul"]["ok"] and not divergence.metrics["relu"]["ok"]
    # the code generated once, the stored values, the inside of the wrong kernel
    assert ev.compiles == 3


def test_a_value_overwritten_in_place_is_seen_inside(pool, tmp_path):
    """tanh's kernel writes over the matmul's result in place: the matmul's value is never
    stored, so exposing it would change the kernel; it is seen on the inside instead."""
    from minifier.localize.divergence import find_divergence

    gm, values = _case(_fused, [torch.randn(8, 16), torch.randn(16, 16)], tmp_path)
    ev = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), [Injection("tanh").to_dict()]), signature="accuracy@inductor")
    divergence = find_divergence(gm, ev, values)
    assert divergence is not None and divergence.how == "stored" and divergence.roots == ["tanh"]
    assert divergence.metrics["matmul_1"]["ok"] and divergence.metrics["add"]["ok"]
