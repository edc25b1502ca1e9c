"""torch.compile: resize_() on a view of an intermediate changes what the base returns.

Public report: https://github.com/pytorch/pytorch/issues/191449 (open, 2026; CPU and CUDA).
Eager: resizing `alias = base.view(-1)` to 12 elements leaves `base` (1 element) alone, so
`base + 1` is tensor([2.]). Compiled (Dynamo graph-breaks on resize_; inductor only, aot_eager
is right): a 12-element tensor of mostly garbage. torch 2.13.0, CPU.
"""
import torch


def f(x):
    base = x + 1
    alias = base.view(-1)
    alias.resize_(12)
    return base + 1


x = torch.zeros(1)
eager = f(x.clone())
compiled = torch.compile(f)(x.clone())
print("eager", eager, "compiled", compiled)
assert eager.shape == compiled.shape, f"shape {tuple(compiled.shape)} vs eager {tuple(eager.shape)}"
torch.testing.assert_close(compiled, eager)
