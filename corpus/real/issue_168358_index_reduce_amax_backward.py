"""torch.compile: the backward of index_reduce(..., "amax", include_self=False) fails to compile on CPU.

Public report: https://github.com/pytorch/pytorch/issues/168358 (open, 2025; reported on CUDA as
NaN gradients). On CPU the forward compiles and matches eager, and aot_eager gives eager's
gradient [1, 0, 0, 0, 0]; Inductor's C++ backend fails compiling the backward graph:
`InductorError: AssertionError` at `assert isinstance(index, CppCSEVariable) and index.is_vec`
(codegen/cpp.py, store). A scatter-max as in graph neural networks cannot be trained compiled.
torch 2.13.0, CPU.
"""
import torch


def reduce_max(src, index, dim_size, dim=0):
    out_shape = list(src.shape)
    out_shape[dim] = dim_size
    out = torch.full(out_shape, float("-inf"), dtype=src.dtype, device=src.device)
    return out.index_reduce(dim, index, src, "amax", include_self=False)


def value_and_grad(f, src, index, dim_size):
    src = src.clone().requires_grad_(True)
    out = f(src, index, dim_size)
    return out, torch.autograd.grad(out.sum(), src)[0]


torch.manual_seed(0)
src = torch.randn(5)
index = torch.zeros(5, dtype=torch.int64)
dim_size = int(index.max()) + 1
eager = value_and_grad(reduce_max, src, index, dim_size)
compiled = value_and_grad(torch.compile(reduce_max), src, index, dim_size)
print("eager grad", eager[1].tolist(), "compiled grad", compiled[1].tolist())
torch.testing.assert_close(compiled, eager)
