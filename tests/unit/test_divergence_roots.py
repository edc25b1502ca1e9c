"""Where an accuracy bug starts: a value laid out otherwise is not a wrong value. An intermediate
exposed as an output keeps the strides Inductor chose for it, and a real layout bug beside the
accuracy one once made `cat` the "first divergent node" of a relu plant, so the two came out as
one repro holding both."""
import torch
import torch.fx as fx

from minifier.graph.nodes import diverges, roots


def step(cache, keys, values):
    keys = torch.cat([cache, keys.transpose(0, 1)], dim=-2)
    gated = torch.relu(values) * 0.5
    return keys, gated + keys.sum()


LAYOUT = {"ok": False, "rung": "layout", "why": "strides (1, 6), eager's (4, 1)"}
VALUES = {"ok": False, "rung": "values", "max_abs_err": 0.9}
OK = {"ok": True}


def test_a_layout_difference_alone_does_not_diverge():
    assert not diverges(LAYOUT) and diverges(VALUES) and not diverges(OK)
    assert diverges({"ok": False, "rung": "signed_zero"})  # an accuracy rung still counts


def test_the_root_is_where_values_go_wrong_not_where_strides_do():
    gm = fx.symbolic_trace(step)
    names = {n.name for n in gm.graph.nodes}
    assert {"cat", "relu", "mul", "sum_1", "add"} <= names
    metrics = {"cat": LAYOUT, "relu": VALUES, "mul": VALUES, "sum_1": OK, "add": VALUES}
    assert roots(gm, metrics) == ["relu"]
    # with cat's values wrong too, both start a divergence of their own
    assert roots(gm, {**metrics, "cat": VALUES}) == ["cat", "relu"]
