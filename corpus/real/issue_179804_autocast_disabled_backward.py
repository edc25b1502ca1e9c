"""torch.compile: a region with autocast(enabled=False) inside an outer autocast gets a bf16 backward.

Public report: https://github.com/pytorch/pytorch/issues/179804 (open, 2026; reported on CUDA
with backend="aot_eager", CPU autocast does the same). The forward matmul runs in fp32 (inner
autocast disabled); eager's backward does too. The compiled backward runs the matmul under the
outer bf16 autocast, so the weight gradient carries bf16 rounding: ~1e-2 off fp64 where eager
is ~1e-6 off. AOTAutograd (aot_eager fails, Dynamo's `eager` backend is right).
torch 2.13.0, CPU.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)
w = nn.Linear(64, 64)
h = torch.randn(4, 64, dtype=torch.bfloat16, requires_grad=True)
g = torch.randn(4, 64)


def inner_fn(x):
    with torch.amp.autocast("cpu", enabled=False):
        return x.float() @ w.weight.float().T


def weight_grad(fn):
    w.weight.grad = None
    with torch.amp.autocast("cpu", dtype=torch.bfloat16):
        out = fn(h)
    out.backward(g)
    return w.weight.grad.clone()


eager = weight_grad(inner_fn)
compiled = weight_grad(torch.compile(inner_fn))
exact = (g.double().T @ h.detach().double())  # d(out)/d(W) with out = x @ W.T
err_eager = (eager.double() - exact).abs().max().item()
err_compiled = (compiled.double() - exact).abs().max().item()
print(f"max error vs fp64: eager {err_eager:.2e}, compiled {err_compiled:.2e}")
assert err_compiled <= 10 * err_eager + 1e-6, "compiled weight gradient lost precision (bf16 backward)"
