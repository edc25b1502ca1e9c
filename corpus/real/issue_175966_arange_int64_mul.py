"""torch.compile wraps int64 arithmetic at 32 bits: arange(0, 11, int64) * tensor([10**9]).

Public report: https://github.com/pytorch/pytorch/issues/175966 (open, 2026; reported on CUDA,
the CPU code generator does the same). Eager gives 0, 1e9, ..., 1e10; Inductor's lowering of
the product of an int64 arange and an int64 scalar tensor computes in int32, so positions 3..10
wrap (3e9 -> -1294967296). aot_eager_decomp_partition matches eager.
torch 2.13.0, CPU: 8 of 11 positions differ. Integer results: no rounding excuse.
"""
import torch


def token_offsets(x):
    # e.g. byte offsets of fixed-size records in a large file
    return torch.arange(0, 11, device=x.device, dtype=torch.int64) * torch.tensor(
        [int(1e9)], dtype=torch.int64, device=x.device)


x = torch.zeros(1)
eager = token_offsets(x)
compiled = torch.compile(token_offsets)(x)
print("eager   ", eager.tolist())
print("compiled", compiled.tolist())
assert torch.equal(eager, compiled), "compiled int64 offsets differ from eager"
