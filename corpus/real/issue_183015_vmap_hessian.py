"""torch.compile(torch.vmap(torch.func.hessian(f))) fails in Dynamo's fake-tensor run.

Public report: https://github.com/pytorch/pytorch/issues/183015 (open, 2026). Eager computes
per-sample Hessians; compiled (any backend, `eager` included) raises `TorchRuntimeError: ...
_autograd_grad ... InferenceMode::is_enabled() && self.is_inference() INTERNAL ASSERT FAILED`
(jacfwd as the outer transform over jacrev under vmap). torch 2.13.0, CPU.
"""
import torch


def energy(x):
    return (x.sin() * x).sum()


x = torch.randn(4, 3)
eager = torch.vmap(torch.func.hessian(energy))(x)
compiled = torch.compile(torch.vmap(torch.func.hessian(energy)))(x)
torch.testing.assert_close(compiled, eager)
