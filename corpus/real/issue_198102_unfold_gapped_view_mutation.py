"""torch.compile zeroes the input elements between the windows of a mutated unfold view.

Public report: https://github.com/pytorch/pytorch/issues/198102 (open, 2026). `x.unfold(1, 1, 5)`
has windows at columns 0 and 5 only; `v.add_(v)` doubles those. Compiled, functionalization's
replay writes the whole base back and every column no window covers becomes 0 (16 of 24
elements). aot_eager fails too (`eager` backend is right). Integers, no rounding. torch 2.13.0,
CPU.
"""
import torch


def fn(x):
    v = x.unfold(1, 1, 5)
    v.add_(v)
    return x


x = torch.arange(1, 25, dtype=torch.int64).reshape(4, 6)
eager = fn(x.clone())
compiled = torch.compile(fn)(x.clone())
print("eager   ", eager[0].tolist())
print("compiled", compiled[0].tolist())
torch.testing.assert_close(compiled, eager)
