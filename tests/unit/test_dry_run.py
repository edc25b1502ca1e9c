"""A CUDA candidate that indexes by its values runs eagerly on the CPU before any worker sees it
(minifier.reduce.dry_run): a shrunk embedding table that the recorded indices overrun would be
a device-side assert on the GPU, a dead CUDA context and a worker started again. Here the
values live on the CPU, so the checks are asked to take CPU tensors for CUDA ones; the CUDA
path itself is tests/test_cuda.py's."""
import torch
import torch.fx as fx

from minifier.reduce.dry_run import indexes_by_value, why_index_fails
from minifier.reduce.passes.shrink_shapes import resize
from minifier.reduce.validate import validator

F = torch.nn.functional


def tower(ids, table, w):
    return torch.tanh(F.embedding(ids, table) @ w)


def _graph():
    gm = fx.symbolic_trace(tower)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    torch.manual_seed(0)
    values = {"ids": torch.randint(0, 50, (4, 6)), "table": torch.randn(50, 8), "w": torch.randn(8, 8)}
    return gm, values


def test_a_shrunk_table_that_the_indices_overrun_is_an_index_error_before_any_compile():
    gm, values = _graph()
    assert indexes_by_value(gm)
    assert why_index_fails(gm, values, {}, devices=("cpu",)) is None
    shrunk = resize(gm, values, {50: 1})  # shrink_shapes' first try: every size class to 1
    why = why_index_fails(shrunk, values, {}, devices=("cpu",))
    assert why and why.startswith("an index out of range"), why
    assert why_index_fails(resize(gm, values, {6: 1}), values, {}, devices=("cpu",)) is None  # fewer ids: fine


def test_only_cuda_graphs_that_index_by_value_are_run_on_the_cpu():
    gm, values = _graph()
    assert why_index_fails(resize(gm, values, {50: 1}), values, {}) is None  # CPU inputs: the worker says it cheaply
    assert not indexes_by_value(fx.symbolic_trace(lambda x, w: torch.tanh(x @ w)))
    assert validator(values, base=gm)(resize(gm, values, {50: 1})) is None  # nor from the validator, on the CPU
