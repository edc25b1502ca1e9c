"""The reduction passes in the order the reducer runs them, each with a stable name (progress
lines and report.json use it) and a line saying what it removes (llvm-reduce's DeltaPasses.def).

Structure first (fewest ops), then operands, then the inputs: strides before sizes (a
one-element tensor has no strides left to lose), sizes before rank, values last.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import torch.fx as fx

from minifier.reduce.passes.cut_after_culprit import cut_after_culprit
from minifier.reduce.passes.cut_at_divergence import cut_at_divergence
from minifier.reduce.passes.drop_unit_dims import drop_unit_dims
from minifier.reduce.passes.fold_into_input import fold_into_input
from minifier.reduce.passes.isolate_op import isolate_last_op
from minifier.reduce.passes.make_contiguous import make_contiguous
from minifier.reduce.passes.remove_launches import remove_launches
from minifier.reduce.passes.remove_outputs import remove_outputs
from minifier.reduce.passes.replace_convs_with_channels_last_inputs import replace_convs_with_channels_last_inputs
from minifier.reduce.passes.replace_operands import replace_operands
from minifier.reduce.passes.replace_ops_with_inputs import replace_ops_with_inputs
from minifier.reduce.passes.shrink_shapes import shrink_shapes
from minifier.reduce.passes.simplify_values import simplify_values


@dataclass(frozen=True)
class Pass:
    """A pass: `fn(graph, evaluator, context)` returns a smaller graph that still reproduces, or None."""

    name: str
    fn: Callable[..., fx.GraphModule | None]
    description: str


PASSES = (
    Pass("cut_at_divergence", cut_at_divergence, "accuracy bugs: the node where values first diverge, alone"),
    Pass("cut_after_culprit", cut_after_culprit, "every op after the one that makes the graph fail"),
    Pass("isolate_last_op", isolate_last_op, "every op but the last, its operands fed as inputs"),
    Pass("remove_outputs", remove_outputs, "outputs the failure does not need, and the ops only they need"),
    Pass("remove_launches", remove_launches, "launches of user Triton kernels, and the buffers only they wrote"),
    Pass("replace_ops_with_inputs", replace_ops_with_inputs, "ops, replaced by inputs fed their eager values"),
    Pass("replace_convs_with_channels_last_inputs", replace_convs_with_channels_last_inputs,
         "convolutions, replaced by channels_last inputs (the layout Inductor gives their outputs)"),
    Pass("replace_operands", replace_operands, "operands, replaced by an earlier value or a scalar"),
    Pass("fold_into_input", fold_into_input, "pointwise ops, folded into the input they read through views"),
    Pass("make_contiguous", make_contiguous, "strides of inputs the bug does not need"),
    Pass("shrink_shapes", shrink_shapes, "input sizes: each size class as small as still fails"),
    Pass("drop_unit_dims", drop_unit_dims, "size-1 dims of inputs"),
    Pass("simplify_values", simplify_values, "input values: zeros, ones or small integers where they do not matter"),
)
BY_NAME = {p.name: p for p in PASSES}
assert all(p.name == p.fn.__name__ for p in PASSES)  # names are stable: the function names they always were
