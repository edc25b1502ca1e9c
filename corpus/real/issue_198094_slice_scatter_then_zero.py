"""torch.compile: y = slice_scatter(x, src); x.zero_(); return y returns zeros.

Public report: https://github.com/pytorch/pytorch/issues/198094 (open, 2026). Inductor reinplaces
the functional slice_scatter into the input x's buffer because x has a copy_ epilogue, then the
later zero_() of x overwrites y. Eager: [0, 1, 2, 3, 4, 5, -6, -5, ...]; compiled all zeros.
Integer data. torch 2.13.0, CPU.
"""
import torch


def fn(x, src):
    y = torch.slice_scatter(x, src[1:3], dim=0, start=1, end=3)  # a fresh tensor in eager
    x.zero_()  # reset the buffer for the next step
    return y


x = torch.arange(24, dtype=torch.int64).reshape(4, 6)
src = torch.arange(-12, 12, dtype=torch.int64).reshape(4, 6)
eager = fn(x.clone(), src.clone())
compiled = torch.compile(fn)(x.clone(), src.clone())
print("eager", eager.flatten().tolist()[:8], "compiled", compiled.flatten().tolist()[:8])
assert torch.equal(eager, compiled), "compiled slice_scatter result was overwritten"
