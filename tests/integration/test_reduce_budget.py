"""Budgets, Ctrl-C and --resume on real Inductor: a reduction cut short keeps the smallest
candidate that reproduced, and a resumed one reuses the saved answers and ends where an
uninterrupted run ends."""
import json
import shutil

import pytest
import torch
import torch.fx as fx

from compiler.graph_code import module_source
from compiler.stages import CompileSetup, CompileSpec
from compiler.stages import CompileSpec
from minifier.graph.edit import canonical, input_ref, op_nodes, placeholders
from minifier.reduce.checkpoint import FILE
from minifier.reduce.passes import Context
from minifier.reduce.reducer import reduce_graph
from minifier.reduce.score import score
from minifier.run.pipeline import record_values
from minifier.workers.evaluate import Evaluator
from minifier.workers.judge import REPRODUCES
from minifier.workers.pool import WorkerPool

SPEC = CompileSpec(config={"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"})


def _model(x, y):
    a = torch.sin(x) * y
    b = torch.relu(a)
    c = torch.tanh(b) + a
    return c.sum(dim=0), torch.cos(y)


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    pool = WorkerPool(1, tmp_path_factory.mktemp("logs"))
    yield pool
    pool.close()


@pytest.fixture
def case(tmp_path):
    gm = fx.symbolic_trace(_model)
    for p in placeholders(gm):
        p.meta["value"] = p.name
    values = record_values(gm, [torch.randn(16, 8), torch.randn(16, 8)])
    torch.save(values, tmp_path / "values.pt")
    return gm, values, tmp_path


def _evaluator(pool, folder):
    return Evaluator(pool, folder, CompileSetup(SPEC, []), signature="accuracy@inductor")


def _final(gm):
    c = canonical(gm)
    return c.code, [input_ref(p) for p in placeholders(c)]


@pytest.mark.slow
def test_compile_budget_stops_with_the_best_candidate_so_far(pool, case):
    gm, values, folder = case
    ev = _evaluator(pool, folder)
    ctx = Context(values=values, kind="accuracy")
    small = reduce_graph(gm, ev, ctx, max_compiles=2)
    assert ctx.notes["stopped"] == "max-compiles"
    assert ev.compiles <= 2
    assert score(small, values) < score(gm, values)  # found mid-pass, kept
    assert ev.test(small) == REPRODUCES


@pytest.mark.slow
def test_interrupted_reduction_resumes_from_its_checkpoint_to_the_same_result(pool, case, tmp_path_factory):
    gm, values, folder = case

    def ctrl_c(name, g):
        raise KeyboardInterrupt

    ev = _evaluator(pool, folder)
    ctx = Context(values=values, kind="accuracy")
    with pytest.raises(KeyboardInterrupt):  # the run stops there (minifier.cli): its best is checkpointed
        reduce_graph(gm, ev, ctx, progress=ctrl_c)
    assert ctx.notes["stopped"] == "interrupted"
    saved = json.loads((folder / FILE).read_text())
    best = saved["best"]["accuracy@inductor"]
    assert best["stopped"] == "interrupted" and best["source"] != module_source(gm)  # a step was kept
    assert len(saved["answers"]) == len(ev.cache)  # every answer given before the stop, for --resume
    spent = ev.compiles

    resumed_ev = _evaluator(pool, folder)
    resumed = reduce_graph(gm, resumed_ev, Context(values=values, kind="accuracy"), resume=True)

    other = tmp_path_factory.mktemp("uninterrupted")
    shutil.copy(folder / "values.pt", other / "values.pt")
    fresh_ev = _evaluator(pool, other)
    fresh = reduce_graph(gm, fresh_ev, Context(values=values, kind="accuracy"))

    assert _final(resumed) == _final(fresh)
    assert len(op_nodes(fresh)) == 1
    assert resumed_ev.compiles <= fresh_ev.compiles - spent  # nothing compiled twice
