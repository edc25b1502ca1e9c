"""Is a candidate a well-formed program at all? Checked in the parent, before any compile.

A reduction step can produce a graph that no compiler could be blamed for: a shrunk input
that no longer fits a hard-coded `view(8, 32, 100)`, an operand swapped for one of another
shape, a dangling node. Running the graph on fake tensors (shapes, strides and dtypes, no
data) catches these in milliseconds; such candidates are answered `invalid` without ever
reaching a worker.

What fake tensors cannot judge (data-dependent shapes, ops without a meta kernel) is given
the benefit of the doubt: the worker's eager run is the final word on validity.
"""
from __future__ import annotations

from typing import Callable

import torch
import torch.fx as fx
from torch._subclasses.fake_tensor import (DataDependentOutputException, DynamicOutputShapeException,
                                           FakeTensorMode, UnsupportedFakeTensorException,
                                           UnsupportedOperatorException)
from torch.fx.passes.fake_tensor_prop import FakeTensorProp

from minifier.reduce.graph_edit import placeholders
from minifier.reduce.input_transforms import apply_transform

# Fake tensors could not tell: not a verdict on the candidate.
UNKNOWABLE = (DataDependentOutputException, DynamicOutputShapeException, UnsupportedFakeTensorException,
              UnsupportedOperatorException, NotImplementedError)


def fake_inputs(gm: fx.GraphModule, values: dict, mode: FakeTensorMode) -> list:
    """The candidate's inputs as fake tensors of `mode`, transforms applied."""
    args = []
    for p in placeholders(gm):
        value = values[p.meta.get("value", p.name)]
        if isinstance(value, torch.Tensor):
            fake = mode.from_tensor(value)
            with mode:
                value = apply_transform(fake, p.meta.get("transform"))
        args.append(value)
    return args


def fake_values(gm: fx.GraphModule, values: dict,
                retry: Callable[[fx.Node, Exception], bool] | None = None) -> dict[str, object]:
    """Fake (shape-only) value of every node of `gm` fed by the recorded inputs; raises when
    the graph cannot run on them. `retry(node, error)` may edit a failing node and return
    True to have it run again (how shrunk shapes repair hard-coded sizes)."""
    gm.graph.lint()
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    env: dict[str, object] = {}

    class Prop(FakeTensorProp):
        def run_node(self, n):
            try:
                result = super().run_node(n)
            except Exception as exc:
                if retry is None or not retry(n, exc):
                    raise
                result = super().run_node(n)
            env[n.name] = result
            return result

    with torch.no_grad():
        Prop(gm, mode).propagate_dont_convert_inputs(*fake_inputs(gm, values, mode))
    return env


def why_invalid(gm: fx.GraphModule, values: dict) -> str | None:
    """None when the candidate may run; otherwise one line saying why it cannot."""
    try:
        fake_values(gm, values)
    except UNKNOWABLE:
        return None
    except Exception as exc:  # shape, dtype or structure errors: the candidate is broken
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
        return f"{type(exc).__name__}: {first}"[:300]
    return None


def validator(values: dict):
    """The check an Evaluator runs on each new candidate (see Evaluator.validate)."""
    return lambda gm: why_invalid(gm, values)
