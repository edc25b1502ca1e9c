"""Numerics, not a bug: a float16 variance normalization is NaN in eager and 0 compiled.

https://github.com/pytorch/pytorch/issues/183605 (closed). With x = 1e-10 everywhere (float16:
a subnormal), eager computes var = 0, var + 1e-9 rounds to 0 in float16, rsqrt gives inf and
x * inf... NaN, while Inductor keeps the chain in float32 and returns 0. The fp64 reference is
0 too: compiled is right where eager is not.
minify: the numerics verdict (exit 5): NaN/Inf where eager has them and fp64 does not.
"""
import torch


def fn(x):
    var = x.var(dim=-1, keepdim=True)
    return x * torch.rsqrt(var + 1e-9)


def main():
    x = torch.full((3, 5), 1e-10, dtype=torch.float16)
    eager = fn(x)
    compiled = torch.compile(fn)(x)
    print("eager:", eager[0, 0].item(), "compiled:", compiled[0, 0].item())
    torch.testing.assert_close(compiled, eager, equal_nan=True)


if __name__ == "__main__":
    main()
