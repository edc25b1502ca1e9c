"""Real Inductor bug (not planted): ceil(x) + 0 keeps -0.0 under Inductor, so 1/(...) flips sign.

Public report: https://github.com/pytorch/pytorch/issues/189799 (open), first repro.
Kind: signed zero (shows as +inf vs -inf). In eager, ceil(-0.5) = -0.0 and -0.0 + 0.0 = +0.0
(IEEE 754), so reciprocal gives +inf; Inductor folds the `+ zeros_like(v)` away, keeps -0.0 and
returns -inf. Reproduces on torch 2.13.0 (CPU).
"""
import torch
import torch.nn as nn


class BugModule(nn.Module):
    def forward(self, x):
        v = torch.ceil(x)
        v = torch.add(v, torch.zeros_like(v))
        return torch.reciprocal(v)


def main():
    x = torch.tensor([-0.5, -0.1, -0.9, 0.5, 1.5])
    model = torch.compile(BugModule())
    with torch.no_grad():
        y = model(x)
    print("1/(ceil(x)+0)", y.tolist())
    return y


if __name__ == "__main__":
    main()
