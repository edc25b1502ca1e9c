"""What a reduced bug masks before the next search (minifier/search/masking.py)."""
import torch
import torch.fx as fx

from minifier.graph.edit import rebuild
from minifier.search.masking import masked_after


def _model():
    def f(x):
        a = torch.relu(x.sin())
        b = torch.relu(a.cos())
        return b * torch.log1p(x.abs())
    gm = fx.symbolic_trace(f)
    values = {n.name: torch.ones(4) for n in gm.graph.nodes if n.op not in ("placeholder", "output")}
    return gm, values


def test_a_bug_without_a_culprit_reduced_to_one_op_masks_every_node_of_that_op():
    gm, values = _model()
    small = rebuild(gm, cut={"sin"}, outputs=["relu"], values=values)  # the first relu alone
    assert masked_after(gm, small, values, set()) == {"relu", "relu_1"}


def test_a_culprit_s_op_is_given_and_a_repro_of_several_ops_masks_the_op_it_returns():
    gm, values = _model()
    one_relu = rebuild(gm, cut={"sin"}, outputs=["relu"], values=values)
    assert masked_after(gm, one_relu, values, {"relu"}) == {"relu"}  # an accuracy culprit's op: given
    two_ops = rebuild(gm, outputs=["relu"], values=values)  # sin, then the relu it returns
    assert masked_after(gm, two_ops, values, set()) == {"sin", "relu", "relu_1"}
