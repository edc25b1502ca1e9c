"""The parent-side pieces of reduction, no compiler needed: input transforms, shape shrinking
with hard-coded sizes, validity on fake tensors, the score, canonical names, the delta core's
empty-first try."""
import torch
import torch.fx as fx

from minifier.graph.edit import canonical, graph_inputs, input_ref, placeholders, rebuild, with_transforms
from minifier.graph.input_transforms import apply_transform, meta_of, resolve, with_step
from minifier.reduce.delta import ddmin
from minifier.reduce.passes.shrink_shapes import resize, size_classes
from minifier.reduce.score import score
from minifier.reduce.validate import why_invalid
from minifier.run.pipeline import record_values
from minifier.workers.judge import PASSES, REPRODUCES


def _traced(fn, inputs):
    gm = fx.symbolic_trace(fn)
    for p in placeholders(gm):
        p.meta["value"] = p.name
    return gm, record_values(gm, inputs)


def _model(x, w):
    y = torch.relu(x.transpose(1, 2))
    flat = y.reshape(8, 3200)  # Dynamo hard-codes sizes, including products of them
    return flat.sum(dim=1), torch.nn.functional.layer_norm(x.view(8, 32, 100).transpose(1, 2) * w, (32,))


def test_transform_steps_have_one_spelling_and_apply_alike_to_real_and_meta_tensors():
    t = with_step(with_step(None, ("zeros",)), ("shape", (2, 3)))
    assert t == (("shape", (2, 3)), ("zeros",))
    assert with_step(t, ("ones",)) == (("shape", (2, 3)), ("ones",))  # one value step at a time
    x = torch.randn(4, 5).t()  # strided
    real = apply_transform(x, t)
    assert real.shape == (2, 3) and not real.any()
    assert meta_of(x, t).shape == real.shape and meta_of(x, t).stride() == real.stride()
    assert resolve({"x": x}, ("x", (("contiguous",),))).is_contiguous()
    assert torch.equal(resolve({"x": x}, ("x", [["view", [20]]])), x.reshape(20))  # as JSON gives it back


def test_shrinking_a_size_class_rewrites_hard_coded_sizes_and_stays_valid():
    gm, values = _traced(_model, [torch.randn(8, 32, 100), torch.randn(32)])
    assert size_classes(gm, values) == [100, 32, 8]
    small = resize(gm, values, {100: 1, 8: 2})
    assert why_invalid(small, values) is None
    assert [t.shape for t in graph_inputs(small, values)] == [(2, 32, 1), (32,)]
    assert "view(2, 32, 1)" in small.code and "reshape(2, -1)" in small.code  # 3200 = 32 * 100 is inferred
    eager = small(*graph_inputs(small, values))
    assert eager[0].shape == (2,) and eager[1].shape == (2, 1, 32)
    assert score(small, values) < score(gm, values)
    # A value cut out later is shrunk the same way, so the graph stays valid.
    cut = rebuild(small, cut={"relu"}, values=values)
    assert why_invalid(cut, values) is None
    assert [p.meta.get("transform") for p in placeholders(cut) if p.name == "relu"] == [(("shape", (2, 1, 32)),)]


def test_a_candidate_that_does_not_fit_its_hard_coded_view_is_invalid():
    def f(x):
        return torch.relu(x).view(4, 2, 64)

    gm, values = _traced(f, [torch.randn(8, 64)])
    assert why_invalid(gm, values) is None
    broken = resize(gm, values, {64: 1, 8: 1})
    why = why_invalid(broken, values)
    assert why and "invalid for input of size 1" in why
    operand_swap = with_transforms(gm, {"x": with_step(None, ("shape", (8, 63)))})
    assert why_invalid(operand_swap, values) is not None


def test_score_puts_ops_first_then_elements_then_plainer_values():
    gm, values = _traced(lambda x, y: torch.relu(x) + y, [torch.randn(4, 4).t(), torch.randn(4, 4)])
    ops, numel, inputs, rank, plain = score(gm, values)
    assert (ops, numel, inputs, rank) == (2, 32, 2, 4)
    contiguous = with_transforms(gm, {"x": (("contiguous",),)})
    zeros = with_transforms(gm, {"x": (("contiguous",), ("zeros",))})
    assert score(zeros, values) < score(contiguous, values) < score(gm, values)
    fewer_ops = rebuild(gm, cut={"relu"}, values=values)
    assert score(fewer_ops, values) < score(zeros, values)  # one op less beats any input change


def test_canonical_names_do_not_depend_on_the_original_names():
    def first(a, b):
        c = torch.neg(b)
        return torch.maximum(a, c)

    def second(pixels, level):
        negated = torch.neg(level)
        return torch.maximum(pixels, negated)

    x, y = torch.randn(4), torch.randn(4)
    g1, _ = _traced(first, [x, y])
    g2, _ = _traced(second, [x, y])
    g1 = with_transforms(g1, {"a": (("ones",),)})
    c1, c2 = canonical(g1), canonical(g2)
    assert c1.code == c2.code
    assert [p.name for p in placeholders(c1)] == ["arg0", "arg1"]
    assert [p.meta["value"] for p in placeholders(c1)] == ["b", "a"]  # order of first use
    assert input_ref(placeholders(c1)[1]) == ("a", (("ones",),))
    assert torch.equal(c1(*graph_inputs(c1, {"a": x, "b": y})), torch.maximum(torch.ones(4), -y))


class PredicateEvaluator:
    """The search core driven by a pure predicate (no compiler needed to test the search)."""

    def __init__(self, needed):
        self.needed = set(needed)
        self.tried = []

    def test_many(self, candidates):
        self.tried += candidates
        return [REPRODUCES if self.needed <= set(c) else PASSES for c in candidates]

    def first_reproducing(self, candidates):
        return next((i for i, v in enumerate(self.test_many(candidates)) if v == REPRODUCES), None)


def test_ddmin_tries_removing_everything_first():
    ev = PredicateEvaluator(set())
    assert ddmin(ev, list(range(10)), lambda kept: kept, 2) == []
    assert ev.tried == [[]]
    ev = PredicateEvaluator({7})
    assert ddmin(ev, list(range(10)), lambda kept: kept, 2) == [7]
    assert ev.tried[0] == []


def test_python_operators_named_with_an_underscore_are_pure_and_setitem_is_not():
    """`operator.and_` (a mask in a transformers model) was taken for an in-place op by its
    trailing underscore, so no edit could drop it; `setitem` writes into a tensor and stays."""
    import operator

    graph = fx.Graph()
    x, m = graph.placeholder("x"), graph.placeholder("m")
    graph.call_function(operator.and_, (m, m))  # dead and pure
    graph.call_function(operator.setitem, (x, 0, 1.0))  # dead but a write
    graph.output(graph.call_function(torch.neg, (x,)))
    gm = rebuild(fx.GraphModule(torch.nn.Module(), graph))
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert operator.and_ not in targets and operator.setitem in targets
