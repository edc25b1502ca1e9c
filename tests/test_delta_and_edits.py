"""Graph edits keep meaning and names; the delta core returns 1-minimal subsets."""
import torch
import torch.fx as fx

from minifier.delta import ddmin
from minifier.evaluate import PASSES, REPRODUCES
from minifier.graph_edit import op_names, rebuild, sinks
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


def test_ddmin_is_one_minimal_and_window_independent():
    items = list(range(40))
    for window in (1, 2, 4):
        ev = PredicateEvaluator({3, 17, 29})
        assert ddmin(ev, items, lambda kept: kept, window) == [3, 17, 29]
