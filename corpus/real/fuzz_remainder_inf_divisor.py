"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: NaN for a number. `torch.remainder(x, inf)` is x for a finite x >= 0 (Python's
`3.0 % inf == 3.0`, and eager agrees); Inductor's C++ code computes `x - floor(x / inf) * inf`
= `3 - 0 * inf` = NaN. No public report found (#188048 is the CUDA floor-division cousin).
Reproduces on torch 2.13.0 (CPU).
User-style program: wrap phases into a period that is infinite for unbounded channels.
"""
import torch


def wrap_phase(phase, period):
    return torch.remainder(phase, period)


def main():
    phase = torch.tensor([3.0, 0.25, 1.5, 7.0] * 4)
    period = torch.tensor([float("inf"), 2.0, float("inf"), 4.0] * 4)  # channels 0 and 2 are unbounded
    wrapped = torch.compile(wrap_phase)(phase, period)
    print("wrapped", wrapped[:4].tolist())
    return wrapped


if __name__ == "__main__":
    main()
