"""Real Inductor bug (not planted): a ZeroTensor graph input segfaults the compiled CPU kernel.

Public report: https://github.com/pytorch/pytorch/issues/197067 (open; PR #197315 proposes a graph
break). Kind: crash. The gradient of torch.sgn is an efficient ZeroTensor (no storage); eager reads
it as zeros, the Inductor CPU kernel dereferences its null data pointer: SIGSEGV (exit 139).
Reproduces on torch 2.13.0 (CPU).

User-style program: a gradient-based saliency score fed to a compiled post-processing function.
"""
import torch


def postprocess(grad):
    return grad[-1] + 10


def main():
    torch.manual_seed(0)
    x = torch.randn(3, requires_grad=True)
    grad = torch.autograd.grad(torch.sgn(x).sum(), x)[0]  # a ZeroTensor
    compiled = torch.compile(postprocess)
    out = compiled(grad)
    print("score", out.item())
    return out


if __name__ == "__main__":
    main()
