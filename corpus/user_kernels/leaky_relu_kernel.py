"""A CUDA MLP whose activation is the user's own Triton kernel, launched from compiled code.

`leaky_relu_kernel` is a plain `@triton.jit` kernel called with a grid inside the model's
forward, so Dynamo's graph holds its launch (triton_kernel_wrapper_mutation) and the slope 0.1
as a constant argument. The kernel is right; the bug is Inductor's handling of it: its launch
is lowered with the float constant arguments doubled (`plant("user_kernels:double_float_args")`,
compiler/inject_user_kernels.py), so negative activations come out twice too small. Eager and
aot_eager launch the kernel as written. Needs a CUDA GPU.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

from compiler.inject import plant

plant("user_kernels:double_float_args")


@triton.jit
def leaky_relu_kernel(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, tl.where(x > 0, x, x * slope), mask=mask)


def leaky_relu(x):
    out = torch.empty_like(x)
    n = x.numel()
    leaky_relu_kernel[(triton.cdiv(n, 256),)](x, out, n, 0.1, BLOCK=256)
    return out


class Block(nn.Module):
    def __init__(self, dim=64, hidden=128):
        super().__init__()
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.norm(x + self.down(leaky_relu(self.up(x))))


def main():
    torch.manual_seed(0)
    model = nn.Sequential(Block(), Block()).cuda().eval()
    x = torch.randn(8, 64, device="cuda")
    with torch.no_grad():
        out = torch.compile(model)(x)
        print("max difference from eager:", (out - model(x)).abs().max().item())


if __name__ == "__main__":
    main()
