"""torch.compile of hessian(hessian(mlp)) fails in Dynamo's fake-tensor run.

Public report: https://github.com/pytorch/pytorch/issues/154284 (open, 2025). Fourth derivatives
of a small MLP: eager works; compiled raises `TorchRuntimeError: ... _autograd_grad ...
InferenceMode::is_enabled() && self.is_inference() INTERNAL ASSERT FAILED`. Sizes cut from
16/16/8 to 4/4/2 to run fast on CPU. torch 2.13.0, CPU.
"""
import torch
import torch.nn as nn
from torch.func import hessian

torch.manual_seed(0)
f = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Linear(4, 2))
x = torch.zeros(4)
hess_hess = hessian(hessian(f))
eager = hess_hess(x)
compiled = torch.compile(hess_hess)(x)
torch.testing.assert_close(compiled, eager)
