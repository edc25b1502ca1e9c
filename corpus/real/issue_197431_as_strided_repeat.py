"""torch.compile: as_strided over a strided slice of a repeat() result reads the wrong elements.

Public report: https://github.com/pytorch/pytorch/issues/197431 (open, 2026, found by a fuzzer).
`full = x.repeat((3, 2)); as_strided(full[:, ::2], (3, 2), full.stride())` is a valid view of
full's storage in eager; compiled, full[:, ::2] is not a view of the same buffer, so as_strided
reads other (or uninitialized) memory: 3 of 6 elements differ, by ~1.5 (not rounding).
torch 2.13.0, CPU.
"""
import torch


def fn(x):
    full = x.repeat((3, 2))
    return torch.as_strided(full[:, ::2], (3, 2), full.stride())


torch.manual_seed(0)
x = torch.randn(1, 1)
out1 = fn(x)
out2 = torch.compile(fn)(x)
print("eager", out1.tolist(), "compiled", out2.tolist())
torch.testing.assert_close(out2, out1, equal_nan=True)
