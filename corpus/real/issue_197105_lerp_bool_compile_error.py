"""torch.compile fails on torch.lerp of bool tensors with a 0-d float weight; eager runs.

Public report: https://github.com/pytorch/pytorch/issues/197105 (open, 2026; CPU and CUDA).
Eager and aot_eager return float32; Inductor's lerp lowering computes `end - start` on the bool
tensors before promotion and raises `NotImplementedError: Subtraction, the - operator, with two
bool tensors is not supported`. torch 2.13.0, CPU.
"""
import torch


def f(a, w):
    return torch.lerp(a, a, w)


torch.manual_seed(0)
a = torch.randint(0, 2, (3, 4)).bool()
w = torch.tensor(0.3)
eager = f(a, w)
compiled = torch.compile(f)(a, w)
torch.testing.assert_close(compiled, eager)
