"""Numerics, not a bug: a bfloat16 division by a float32 divisor cast to bfloat16.

https://github.com/pytorch/pytorch/issues/141436 (closed; reported on CUDA, the same on CPU
with torch 2.13). Eager rounds the divisor to bfloat16 and divides in bfloat16; Inductor fuses
the cast into the division and rounds once, so results differ by up to 32 (values of size
~1e3: one or two bfloat16 ulps), and allclose fails. Against an fp64 reference compiled is as
close as eager (the same max error, a smaller RMSE).
minify: the numerics verdict (exit 5) with the numbers.
"""
import torch


def division(Y, y):
    return Y / y.to(Y.dtype).unsqueeze(-1)


def main():
    torch.manual_seed(0)
    Y = torch.randn(1, 6, 128, 4, 32, dtype=torch.bfloat16)
    y = torch.randn(1, 6, 128, 4, dtype=torch.float32)
    out_eager = division(Y, y)
    out_compiled = torch.compile(division)(Y, y)
    print("allclose:", torch.allclose(out_eager, out_compiled))
    assert torch.allclose(out_eager, out_compiled), (out_eager - out_compiled).abs().max()


if __name__ == "__main__":
    main()
