"""The tries of a failure that ends its process share one compile (compiler/shared_compile.py):
a later try loads what an earlier try of the same question stored, a crashing try stores its
compile before it dies, and nothing compiled with other planted bugs is ever loaded. Real
workers, real Inductor."""
import os

import pytest
import torch
import torch.fx as fx

from compiler import settings
from compiler.inject import Injection
from compiler.stages import CompileSetup, CompileSpec
from minifier.run.pipeline import record_values
from minifier.workers.evaluate import Evaluator
from minifier.workers.pool import WorkerPool


def _case(folder, size=64):
    gm = fx.symbolic_trace(lambda x: torch.relu(x) * 2 + 1)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    torch.save(record_values(gm, [torch.randn(size)]), folder / "values.pt")
    return gm


@pytest.fixture
def pool(tmp_path, monkeypatch):
    for name in settings.OVERRIDES:  # as minify's launch leaves the environment of every process it starts
        monkeypatch.delenv(name, raising=False)
    pool = WorkerPool(1, tmp_path / "logs")
    yield pool
    pool.close()


def _try(ev, gm, repeat):
    return ev.pool.submit(ev.job(gm, None, repeat, share_compile=True).to_dict()).result()


def test_a_later_try_loads_the_compile_an_earlier_try_stored_and_judges_it_alike(pool, tmp_path):
    gm = _case(tmp_path)
    planted = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), [Injection("relu").to_dict()]), signature="")
    first, second = _try(planted, gm, 1), _try(planted, gm, 2)
    assert first["status"] == second["status"] == "fail" and first["kind"] == second["kind"] == "accuracy"
    assert "compile_loaded" not in first and second.get("compile_loaded") is True
    checks = [row for row in pool.timeline if row["op"] == "check"]
    assert [row.get("compile_loaded") for row in checks] == [None, True]  # work/timeline.json says so
    clean = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), []), signature="")
    answer = _try(clean, gm, 1)  # the same graph without the plant: its own store, its own compile
    assert answer["status"] == "pass" and "compile_loaded" not in answer
    assert len(os.listdir(tmp_path / "compiles")) == 2


@pytest.mark.slow
def test_a_try_that_crashes_has_stored_its_compile_for_the_next(pool, tmp_path):
    gm = _case(tmp_path, 4096)
    abort = Injection("relu", "runtime_error", paths=("cpp", "cppvec"))  # `throw 1` in OpenMP: SIGABRT
    crashing = Evaluator(pool, tmp_path, CompileSetup(CompileSpec(), [abort.to_dict()]), signature="")
    assert _try(crashing, gm, 1)["kind"] == "crash"
    store = crashing.job(gm, share_compile=True).compile_store()
    assert any(files for _, _, files in os.walk(store))
    assert _try(crashing, gm, 2)["kind"] == "crash"  # loaded or not, the same bug in a fresh worker
