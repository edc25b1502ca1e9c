"""torch.compile(torch.func.jacfwd(f)) of fp16 matmuls and reductions: C++ compile error.

Public report: https://github.com/pytorch/pytorch/issues/194706 (open, 2026). Eager jacfwd runs;
Inductor's CPU kernel for the forward-mode graph declares `at_Half_tmp_acc1_vec` twice:
`CppCompileError: ... error: conflicting declaration 'auto at_Half_tmp_acc1_vec'`.
torch 2.13.0, CPU.
"""
import torch


def f(x):
    return torch.sum(torch.mm(torch.mm(torch.prod(x) + x, torch.sum(x) + x), torch.sum(x) + x))


x = (torch.arange(1, 10, dtype=torch.float16) / 10).reshape(3, 3)
eager = torch.func.jacfwd(f)(x)
compiled = torch.compile(torch.func.jacfwd(f))(x)
torch.testing.assert_close(compiled, eager)
