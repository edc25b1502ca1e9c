"""Where an accuracy bug starts, found from the values Inductor stores anyway (its kernels come
from the cache), then inside the first wrong kernel (minifier.divergence). Real workers, real
Inductor."""
import pytest
import torch
import torch.fx as fx

from compiler.inject import Injection
from compiler.stages import CompileSpec
from minifier.divergence import find_divergence
from minifier.evaluate import Evaluator
from minifier.pipeline import record_values
from minifier.workers import WorkerPool


@pytest.fixture(scope="module")
def pool(tmp_path_factory):
    pool = WorkerPool(1, tmp_path_factory.mktemp("logs"))
    yield pool
    pool.close()


def _case(fn, inputs, folder):
    gm = fx.symbolic_trace(fn)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    values = record_values(gm, inputs)
    torch.save(values, folder / "values.pt")
    return gm, values


def f(x, w):
    h = torch.sigmoid(x @ w)
    g = torch.relu(h * 3) + 1  # one fused kernel: mul, relu, add; only add's value is stored
    return torch.tanh(g @ w)


def test_a_bug_inside_a_fused_kernel_is_pinned_to_its_op(pool, tmp_path):
    gm, values = _case(f, [torch.randn(8, 16), torch.randn(16, 16)], tmp_path)
    ev = Evaluator(pool, tmp_path, CompileSpec(), [Injection("relu").to_dict()], signature="accuracy@inductor")
    divergence = find_divergence(gm, ev, values)
    assert divergence is not None and divergence.how == "stored"
    assert divergence.roots == ["relu"]
    assert divergence.metrics["mul"]["ok"] and not divergence.metrics["relu"]["ok"]
    # the code generated once, the stored values, the inside of the wrong kernel
    assert ev.compiles == 3


def test_a_value_overwritten_in_place_is_seen_inside(pool, tmp_path):
    """tanh's kernel writes over the matmul's result in place: the matmul's value is never
    stored, so exposing it would change the kernel; it is seen on the inside instead."""
    gm, values = _case(f, [torch.randn(8, 16), torch.randn(16, 16)], tmp_path)
    ev = Evaluator(pool, tmp_path, CompileSpec(), [Injection("tanh").to_dict()], signature="accuracy@inductor")
    divergence = find_divergence(gm, ev, values)
    assert divergence is not None and divergence.how == "stored" and divergence.roots == ["tanh"]
    assert divergence.metrics["matmul_1"]["ok"] and divergence.metrics["add"]["ok"]
