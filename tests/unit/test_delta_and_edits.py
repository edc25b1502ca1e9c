"""Graph edits keep meaning and names; the delta core returns 1-minimal subsets."""
import torch
import torch.fx as fx

from minifier.graph.edit import op_names, rebuild, sinks
from minifier.reduce.delta import bisect_down, ddmin
from minifier.run.pipeline import record_values
from minifier.workers.judge import PASSES, REPRODUCES


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


class SizeEvaluator:
    """A size bisection driven by a predicate on the size; records every size asked, per round."""

    def __init__(self, reproduces):
        self.reproduces = reproduces
        self.rounds: list[list[int]] = []

    def test_many(self, sizes):
        self.rounds.append(list(sizes))
        return [REPRODUCES if self.reproduces(n) else PASSES for n in sizes]


def _bisect(reproduces, hi, window):
    ev = SizeEvaluator(reproduces)
    size, candidate = bisect_down(ev, lambda _, at, n: n, hi, 1, hi, window)
    assert candidate == size
    return size, ev.rounds


def test_a_size_that_must_stay_exact_ends_after_one_round():
    """An alignment or padding bug that shows at 10 and nowhere below: the first middle (5) and
    10 - 1 both lose it, so no size below is tried (before: log2(10) steps)."""
    for window in (1, 2, 3, 8):
        size, rounds = _bisect(lambda n: n == 10, 10, window)
        assert size == 10
        assert {5, 9} <= {n for r in rounds for n in r}
        assert len(rounds) == (2 if window == 1 else 1)


def test_size_bisection_answers_the_same_for_every_window():
    cases = [(lambda n: n >= 7, 100), (lambda n: n >= 99, 100), (lambda n: n % 4 == 0, 128),
             (lambda n: n == 128 or 40 <= n <= 70, 128), (lambda n: n >= 2, 3), (lambda n: True, 2)]
    for reproduces, hi in cases:
        answers = {_bisect(reproduces, hi, window)[0] for window in (1, 2, 3, 5)}
        assert len(answers) == 1, (hi, answers)
    assert _bisect(lambda n: n >= 7, 100, 1)[0] == 7  # monotone: the threshold
    assert _bisect(lambda n: n >= 99, 100, 3)[0] == 99


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
