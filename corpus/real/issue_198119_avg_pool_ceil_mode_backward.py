"""torch.compile: wrong gradient of avg_pool1d with ceil_mode=True (the forward is right).

Public report: https://github.com/pytorch/pytorch/issues/198119 (open, 2026; CPU and CUDA).
With ceil_mode=True and count_include_pad=True the last window hangs over the input; eager (and
aot_eager) divide its gradient by the clipped window (2), Inductor's avg_pool2d_backward
lowering by the full kernel (3): the last two elements get 0.667/0.333 instead of 0.833/0.5.
A compiled training step gets wrong gradients with no error. torch 2.13.0, CPU.
"""
import torch
import torch.nn.functional as F


def pool(x):
    return F.avg_pool1d(x, 3, 2, ceil_mode=True)


def grad_of(f, x):
    x = x.detach().clone().requires_grad_()
    f(x).sum().backward()
    return x.grad


torch.manual_seed(0)
x = torch.randn(1, 1, 6)
eager = grad_of(pool, x)
compiled = grad_of(torch.compile(pool), x)
print("eager   ", eager.flatten().tolist())
print("compiled", compiled.flatten().tolist())
torch.testing.assert_close(compiled, eager)
