"""Checking gradients as well as outputs: a run forward, then backward from one fixed scalar.

`Backward(fn)` runs `fn` and then `weighted_loss(outputs).backward()`, leaving a gradient in
`.grad` of every input that requires one; the oracle (compiler.oracle.run) reads those as
outputs named `grad[i]` and judges them on the same ladder, fp64 reference included. The
fuzzer uses it (minifier.fuzz), so a bug only the backward graph carries is a finding; its
case scripts call `weighted_loss(...).backward()` themselves, with this module's source.
Imports only torch: a case script carries `weighted_loss`'s source.
"""
from __future__ import annotations

import torch


def weighted_loss(outputs):
    """The scalar backward starts from: each floating output that requires grad, times fixed
    weights +0.5, -1, +1.5, -0.5, +1, -1.5, ... (exact in every float dtype; both signs and
    three sizes, so a gradient wrong in sign or scale shows, as it would not under `.sum()`),
    summed. None when no output requires grad."""
    if isinstance(outputs, (tuple, list)):
        terms = [weighted_loss(out) for out in outputs]
        terms = [t for t in terms if t is not None]
        return sum(terms[1:], terms[0]) if terms else None
    if not (isinstance(outputs, torch.Tensor) and outputs.is_floating_point() and outputs.requires_grad):
        return None
    k = torch.arange(outputs.numel(), device=outputs.device)
    weights = ((k % 3 + 1) * (1 - 2 * (k % 2))).to(outputs.dtype).reshape(outputs.shape) / 2
    return (outputs * weights).sum()


class Backward:
    """`fn`, followed by a backward pass from `weighted_loss` of its outputs: the gradients land
    in `.grad` of the inputs that require grad (see `requiring_grad`)."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, *args):
        out = self.fn(*args)
        loss = weighted_loss(out)
        if loss is not None:
            loss.backward()
        return out


def requiring_grad(inputs: list) -> list:
    """The inputs with every floating tensor a leaf that requires grad (same storage, strides
    and offset: `detach` keeps the layout)."""
    return [x.detach().requires_grad_() if isinstance(x, torch.Tensor) and x.is_floating_point() else x
            for x in inputs]


def gradient_output(path: str) -> int | None:
    """The input index of an oracle output path naming a gradient (`out['grad[1]']` -> 1), else None."""
    start = path.find("grad[")
    if start < 0:
        return None
    return int(path[start + 5:path.index("]", start)])
