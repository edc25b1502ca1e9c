"""torch.compile drops cumsum's dtype= argument: int64 instead of bfloat16.

Public report: https://github.com/pytorch/pytorch/issues/189518 (closed 2026; the fix is not in
2.13). Inductor's pointless_cumsum_replacement rewrites cumsum(full(...)) into an arange but
takes the full tensor's dtype (bool -> int64) instead of the requested bfloat16; DETR-style sine
position embeddings then fail with a dtype mismatch downstream. The values agree, the dtype does
not. torch 2.13.0, CPU.
"""
import torch


def f():
    ones = torch.ones((2, 4, 4), dtype=torch.bool)
    return ones.cumsum(1, dtype=torch.bfloat16)


eager = f()
compiled = torch.compile(f)()
print("eager", eager.dtype, "compiled", compiled.dtype)
torch.testing.assert_close(compiled, eager)
