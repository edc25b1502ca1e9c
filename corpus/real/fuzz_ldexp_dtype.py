"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: wrong dtype. `torch.ldexp(x, e)` follows type promotion of both operands in eager (a
float32 mantissa with a float64 exponent gives float64); Inductor keeps the mantissa's dtype
(float32), so the result loses precision and later float64 arithmetic changes value. Public
report #197091 (open; fix PR #197162). Reproduces on torch 2.13.0 (CPU).
User-style program: scaling float32 mantissas by float64 exponents in a float64 computation.
"""
import torch


def scaled(mantissa, exponent):
    return torch.ldexp(mantissa, exponent) + 1e-9


def main():
    mantissa = torch.tensor([0.75, 1.0, -0.5])
    exponent = torch.tensor([3.0, -2.0, 10.0], dtype=torch.float64)
    out = torch.compile(scaled)(mantissa, exponent)
    print(out.dtype, out.tolist())
    return out


if __name__ == "__main__":
    main()
