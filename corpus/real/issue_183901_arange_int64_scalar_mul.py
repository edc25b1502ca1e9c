"""torch.compile wraps int64 arange * python int at 32 bits.

Public report: https://github.com/pytorch/pytorch/issues/183901 (open, 2026; reported on CUDA,
same on CPU). `torch.arange(9, dtype=int64) * 1500000000`: eager 0, 1.5e9, 3e9, ...; Inductor
-1294967296 at position 2 onward (int32 wraparound). The bisector of the report names the `mul`
lowering. torch 2.13.0, CPU: 7 of 9 positions differ.
"""
import torch


def timestamps_ns(x):
    step_ns = 1500000000  # 1.5 s in nanoseconds
    return torch.arange(9, dtype=torch.int64) * step_ns + x.long()


x = torch.zeros(1)
eager = timestamps_ns(x)
compiled = torch.compile(timestamps_ns)(x)
print("eager   ", eager.tolist())
print("compiled", compiled.tolist())
assert torch.equal(eager, compiled), "compiled int64 timestamps differ from eager"
