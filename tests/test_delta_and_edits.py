"""Graph edits keep meaning and names; the delta core returns 1-minimal subsets."""
import torch
import torch.fx as fx

from minifier.reduce.delta import ddmin
from minifier.workers.evaluate import PASSES, REPRODUCES
from minifier.reduce.graph_edit import op_names, rebuild, sinks
from minifier.pipeline import record_values


def _graph():
    def f(x, y):
        a = torch.neg(x)
        b = torch.maximum(y, a)
        c = b * 2
        d = torch.sin(x)
        return c + 1, d

    gm = fx.symbolic_trace(f)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm


def test_rebuild_cuts_ops_into_inputs_and_drops_dead_code():
    gm = _graph()
    values = record_values(gm, [torch.randn(4), torch.randn(4)])
    cut = rebuild(gm, cut={"maximum"}, outputs=["mul"], values=values)
    assert op_names(cut) == ["mul"]
    assert [p.meta["value"] for p in cut.graph.find_nodes(op="placeholder")] == ["maximum"]
    assert torch.equal(cut(values["maximum"])[0], values["mul"])


def test_sinks_of_a_prefix():
    gm = _graph()
    assert sinks(gm, 1) == ["maximum"]
    assert sinks(gm, 3) == ["mul", "sin"]


class PredicateEvaluator:
    """The search core driven by a pure predicate (no compiler needed to test the search)."""

    def __init__(self, needed):
        self.needed = set(needed)
        self.tests = 0

    def test_many(self, candidates):
        self.tests += len(candidates)
        return [REPRODUCES if self.needed <= set(c) else PASSES for c in candidates]

    def first_reproducing(self, candidates):
        return next((i for i, v in enumerate(self.test_many(candidates)) if v == REPRODUCES), None)


def test_ddmin_is_one_minimal_and_window_independent():
    items = list(range(40))
    for window in (1, 2, 4):
        ev = PredicateEvaluator({3, 17, 29})
        assert ddmin(ev, items, lambda kept: kept, window) == [3, 17, 29]


def test_aten_constants_in_a_saved_graph_stay_calls():
    """AOTAutograd's backward graphs build constants from aten ops on plain values (relu's
    backward: `where(le, full([], 0.0), grad)`); replayed, they must stay calls, not frozen
    attributes that no edited copy of the graph can carry."""
    from compiler.graph_code import module_from_source, trace_module

    source = ("import torch\nfrom torch import device\n\n\nclass Repro(torch.nn.Module):\n"
              "    def forward(self, x, grad):\n"
              "        le = torch.ops.aten.le.Scalar(x, 0)\n"
              "        full_default = torch.ops.aten.full.default([], 0.0, dtype=torch.float32, "
              "layout=torch.strided, device=device(type='cpu'), pin_memory=False)\n"
              "        return (torch.ops.aten.where.self(le, full_default, grad),)\n")
    gm = trace_module(module_from_source(source))
    assert not list(gm.graph.find_nodes(op="get_attr"))
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    x, grad = torch.randn(6), torch.randn(6)
    values = record_values(gm, [x, grad])
    where = next(n.name for n in gm.graph.nodes if "where" in n.name)
    edited = rebuild(gm, outputs=[where])  # an edited copy builds: nothing is left behind in attributes
    assert torch.equal(edited(x, grad)[0], torch.where(x <= 0, torch.zeros(()), grad))
    assert set(values) >= {"x", "grad", where}
