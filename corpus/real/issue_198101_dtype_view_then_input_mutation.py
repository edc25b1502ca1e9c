"""torch.compile: a value computed from a dtype view of an input is read after a later mutation of that input.

Public report: https://github.com/pytorch/pytorch/issues/198101 (open, 2026; reported on CUDA,
same on CPU). `y = x.view(int32) * 2; y.sub_(-4); x[:, 2:5] = 2; return y.view(int64)`: y must
reflect x before the mutation; Inductor computes y's pending pointwise after the fill of x
(eager 12884901872 at position 2, compiled 17179869192 = (4 << 32) + 8). Integer data.
torch 2.13.0, CPU.
"""
import torch


def pack_and_reset(x):
    y = x.view(torch.int32) * 2  # reads x as int32 pairs -> fresh tensor
    y.sub_(-4)  # in-place update of the intermediate
    x[:, 2:5] = 2  # mutate the input afterwards
    return y.view(torch.int64)  # must reflect x before the mutation


x = torch.arange(-12, 12, dtype=torch.int64).reshape(4, 6)
eager = pack_and_reset(x.clone())
compiled = torch.compile(pack_and_reset)(x.clone())
print("eager", eager.flatten().tolist()[:6])
print("compiled", compiled.flatten().tolist()[:6])
assert torch.equal(eager, compiled), "compiled result read x after its mutation"
