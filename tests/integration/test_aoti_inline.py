"""An exported graph's control flow made flat (minifier/program/aoti_inline.py): a torch.cond
becomes the branch the saved inputs take, a torch.while_loop its body unrolled as many times as
they run it, on small programs really exported with torch.export (no compile)."""
import torch

from minifier.program.aoti_inline import MAX_ITERATIONS, flatten


class Gate(torch.nn.Module):
    """A cond whose true branch holds a second cond (nested subgraphs)."""

    def forward(self, x, y):
        def outer_true(t, u):
            return torch.cond(u.sum() > 0, lambda a: a.exp(), lambda a: a.cos(), (t,)) * 2

        return torch.cond(x.sum() > 0, outer_true, lambda t, u: t.tanh() + u, (x, y))


class Loop(torch.nn.Module):
    def __init__(self, times: int):
        super().__init__()
        self.times = times

    def forward(self, x):
        start = torch.zeros((), dtype=torch.int64)
        return torch.while_loop(lambda i, y: i < self.times, lambda i, y: (i + 1, y.sin() * 2), (start, x))


def _ops(gm) -> list[str]:
    return [n.target.__name__.split(".")[0] for n in gm.graph.nodes if n.op == "call_function"]


def _flat_and_exported(module, args, **kwargs):
    ep = torch.export.export(module, args)
    flat = flatten(ep.graph_module, list(args), **kwargs)
    assert not isinstance(flat, str), flat
    assert not list(flat.gm.named_children()), "submodules left in the flat graph"
    assert all(n.op in ("placeholder", "call_function", "output") for n in flat.gm.graph.nodes)
    torch.testing.assert_close(tuple(flat.gm(*args)), tuple(_as_tuple(ep.module()(*args))))
    return flat


def _as_tuple(value):
    return value if isinstance(value, (tuple, list)) else (value,)


def test_cond_becomes_the_branch_the_inputs_take():
    """Outer true, inner false: the flat graph is cos * 2, the same values as the exported program
    on these inputs; neither the outer false branch (tanh) nor the inner true one (exp) is left."""
    flat = _flat_and_exported(Gate(), (torch.ones(3), -torch.ones(3)))
    assert _ops(flat.gm) == ["cos", "mul"], flat.gm.code
    assert "true branch (true_graph_0)" in flat.notes[0] and "false branch" in flat.notes[1], flat.notes


def test_cond_false_branch():
    flat = _flat_and_exported(Gate(), (-torch.ones(3), torch.ones(3)))
    assert _ops(flat.gm) == ["tanh", "add"], flat.gm.code
    assert len(flat.notes) == 1 and "false branch (false_graph_0)" in flat.notes[0]


def test_both_branches_keeps_the_one_not_taken_as_an_output():
    """For a compile error (the package compiles every branch), the branch not taken is inlined
    too and its outputs are returned beside the graph's own, so its ops are kept."""
    args = (-torch.ones(3), torch.ones(3))
    ep = torch.export.export(Gate(), args)
    flat = flatten(ep.graph_module, list(args), both_branches=True)
    assert {"tanh", "exp", "cos"} <= set(_ops(flat.gm)), flat.gm.code
    outputs = flat.gm(*args)
    assert len(outputs) > 1
    torch.testing.assert_close(outputs[0], ep.module()(*args))


def test_while_loop_is_unrolled_as_many_times_as_it_runs():
    flat = _flat_and_exported(Loop(3), (torch.randn(4),))
    assert _ops(flat.gm).count("sin") == 3, flat.gm.code
    assert "unrolled 3 times" in flat.notes[0]


def test_a_loop_too_long_to_unroll_is_named():
    ep = torch.export.export(Loop(MAX_ITERATIONS + 1), (torch.randn(4),))
    why = flatten(ep.graph_module, [torch.randn(4)])
    assert isinstance(why, str) and "torch.while_loop" in why and str(MAX_ITERATIONS) in why, why


def test_another_subgraph_op_is_named_not_flattened():
    """map_impl also calls a subgraph: minify names it (exit 9 upstream) rather than guess at it."""
    from torch._higher_order_ops.map import map as map_subgraph

    class Mapped(torch.nn.Module):
        def forward(self, xs):
            return map_subgraph(lambda x: x.sin(), xs)

    xs = torch.randn(3, 4)
    why = flatten(torch.export.export(Mapped(), (xs,)).graph_module, [xs])
    assert isinstance(why, str) and "map_impl" in why, why


def test_inputs_the_graph_cannot_run_on_give_one_line():
    """The predicate is read by running the graph on the saved inputs: inputs it cannot run on
    (here: too few) end in one line naming the cond, not a traceback."""
    args = (torch.ones(3), torch.ones(3))
    why = flatten(torch.export.export(Gate(), args).graph_module, [args[0]])
    assert isinstance(why, str) and "`cond` could not be flattened" in why, why
