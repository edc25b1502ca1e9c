"""torch.compile(torch.func.grad(f)) ignores an autograd.Function's custom backward.

Public report: https://github.com/pytorch/pytorch/issues/193279 (closed 2026; fix not in 2.13).
Dynamo inlines the Function's forward and the functorch grad transform differentiates sin
itself: eager grad is zeros (the custom backward), compiled is cos(x). Any backend, `eager`
included. torch 2.13.0, CPU.
"""
import torch


class SinWithZeroBackward(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.sin(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    @staticmethod
    def backward(ctx, grad):
        return torch.zeros_like(grad)  # a straight-through style estimator would go here


def loss(x):
    return SinWithZeroBackward.apply(x).sum()


x = torch.randn(4)
eager = torch.func.grad(loss)(x)
compiled = torch.compile(torch.func.grad(loss))(x)
print("eager", eager, "compiled", compiled)
torch.testing.assert_close(compiled, eager)
