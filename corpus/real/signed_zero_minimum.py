"""Real Inductor bug (not planted): torch.minimum(-0.0, +0.0) loses the sign of zero on CPU.

Public report: https://github.com/pytorch/pytorch/issues/194347 (open; fix proposed in PR #194472).
Kind: signed zero. Eager returns -0.0, Inductor's C++ code (scalar and vectorized) returns +0.0;
anything sign-sensitive downstream (1/x, copysign, atan2) then differs (-inf vs +inf).
Reproduces on torch 2.13.0 (CPU).

User-style program: clip a signed velocity field to an upper bound, then take 1/x.
"""
import torch


class Clip(torch.nn.Module):
    def forward(self, v, bound):
        clipped = torch.minimum(v, bound)
        return clipped, torch.reciprocal(clipped)


def main():
    v = torch.tensor([-0.0, 1.5, -0.0, -2.0, 3.0, -0.0, 0.5])
    bound = torch.tensor([0.0, 1.0, 0.0, 0.0, 2.0, 0.0, 1.0])
    model = torch.compile(Clip())
    clipped, inv = model(v, bound)
    print("clipped", clipped.tolist())
    print("1/clipped", inv.tolist())
    return clipped, inv


if __name__ == "__main__":
    main()
