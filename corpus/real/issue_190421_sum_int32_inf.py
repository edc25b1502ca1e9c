"""torch.compile crashes compiling sum(dtype=int32) of a tensor holding -inf.

Public report: https://github.com/pytorch/pytorch/issues/190421 (closed 2026; the fix is not in
2.13). `torch.sum(torch.log(zeros), dtype=torch.int32)` runs in eager (the float->int cast of
-inf is implementation defined, eager returns a number); Inductor's index propagation folds
the constant and raises `InductorError: OverflowError: cannot convert float infinity to
integer`. torch 2.13.0, CPU.
"""
import torch


@torch.compile
def f():
    x = torch.full((2,), 0.0)  # log(0) -> -inf
    y = torch.log(x)
    z = torch.sum(y, dtype=torch.int32).float()
    return z


print(f())
