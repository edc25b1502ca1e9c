"""torch.compile: x.index_put_(...) then x.add_(x.flip(0)) gives wrong values.

Public report: https://github.com/pytorch/pytorch/issues/198270 (open, 2026; CPU and CUDA).
The copy back into the mutated input x is fused with a read of x at other (flipped) positions,
so some rows read the already-updated values: 16 of 32 elements differ by up to ~1.9.
Either statement alone is right. torch 2.13.0, CPU.
"""
import torch


def f(x):
    x.index_put_((torch.arange(x.size(0), device=x.device),), x * 2.0)
    x.add_(x.flip(0))
    return x


compiled = torch.compile(f)
torch.manual_seed(0)
x = torch.rand(4, 8)
want = f(x.clone())
got = compiled(x.clone())
print("differing elements:", int((got != want).sum()))
torch.testing.assert_close(got, want)
