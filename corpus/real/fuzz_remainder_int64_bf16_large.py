"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: wrong values. `torch.remainder(a, b)` of huge int64 values by bfloat16 divisors (the
result is bfloat16): eager gives a remainder with |r| < |b| that matches fp64 exactly; compiled
gives 0.0 or -549755813888.0, outside the set of possible answers (Inductor computes
a - floor(a / b) * b, which loses the quotient when |a / b| is about 1e19). Same class as
#194345 (open; reported for CUDA, where compiled CPU was right for float32). Reproduces on
torch 2.13.0 (CPU).
User-style program: the phase of large integer timestamps within a bfloat16 period.
"""
import torch


def phase(timestamps, period):
    return torch.remainder(timestamps, period)


def main():
    timestamps = torch.tensor([2**62, -(2**63) + 1, -(2**63), 2**62] * 16 + [7], dtype=torch.int64)
    period = torch.tensor([-2.078125, 0.2294921875, -1.4609375, -2.703125] * 16 + [2.0], dtype=torch.bfloat16)
    out = torch.compile(phase)(timestamps, period)
    print(out[:4].tolist(), "within the period:", bool((out.float().abs() < period.float().abs()).all()))
    return out


if __name__ == "__main__":
    main()
