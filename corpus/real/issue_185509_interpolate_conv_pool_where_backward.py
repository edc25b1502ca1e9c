"""torch.compile: wrong gradients through interpolate -> slice -> conv2d -> max_pool2d -> where.

Public report: https://github.com/pytorch/pytorch/issues/185509 (closed 2026; the fix is not in
2.13). The forward matches eager; the backward does not: input, weight and bias gradients are
off by 40-80 (eager is within 2e-5 of an fp64 run, compiled is 49, 44 and 77 off). Sizes cut
to run fast on CPU. torch 2.13.0, CPU.
"""
import torch
import torch.nn.functional as F


def inner(x, weight, bias):
    y = F.interpolate(x, scale_factor=(1.5, 1.25), mode="bilinear", align_corners=False)
    y = y[:, :, 1:7, 1:8]
    conv = F.conv2d(y, weight, bias, padding=1)
    pool = F.max_pool2d(conv, kernel_size=3, stride=1, padding=1)
    threshold = pool.mean(dim=(2, 3), keepdim=True)
    return conv, pool, threshold


def make_mask(x, weight, bias):
    conv, _, threshold = inner(x, weight, bias)
    return conv > threshold


def fn(x, weight, bias, mask):
    conv, pool, _ = inner(x, weight, bias)
    return torch.where(mask, conv, pool)


torch.manual_seed(0)
x = torch.randn(2, 3, 6, 8)
w = torch.randn(4, 3, 3, 3)
b = torch.randn(4)
with torch.no_grad():
    mask = make_mask(x, w, b)


def grads(f):
    leaves = [t.detach().clone().requires_grad_(True) for t in (x, w, b)]
    f(*leaves, mask).sum().backward()
    return [t.grad for t in leaves]


eager = grads(fn)
compiled = grads(torch.compile(fn))
for name, e, c in zip(("x", "weight", "bias"), eager, compiled):
    print(f"grad {name}: max diff {(e - c).abs().max().item():.4g}")
    torch.testing.assert_close(c, e)
