"""Numerics (a NaN pattern that comes from fp16 rounding): var + rsqrt normalization in fp16.

Public report: https://github.com/pytorch/pytorch/issues/183605 (closed). The input 1e-10 is 0 in
fp16, so var = 0 and, in eager, var + 1e-9 rounds to 0 in fp16: rsqrt gives inf and 0 * inf = NaN.
Inductor keeps the intermediate in fp32 (var + 1e-9 = 1e-9), so it returns 0.0 everywhere.
Eager: all NaN; compiled: all 0.0. Reproduces on torch 2.13.0 (CPU). Expected answer: numerics
(a NaN that eager's fp16 rounding makes, the compiled value is the better one).
"""
import torch


def normalize(x):
    var = x.var(dim=-1, keepdim=True)
    return x * torch.rsqrt(var + 1e-9)


def main():
    x = torch.full((3, 5), 1e-10, dtype=torch.float16)
    y = torch.compile(normalize)(x)
    print("normalized", y[0].tolist())
    return y


if __name__ == "__main__":
    main()
