"""Real Inductor bug (not planted): abs on uint8 promoted to int by std::abs in C++ codegen.

Public report: https://github.com/pytorch/pytorch/issues/187018 (closed, fix PR #187024).
Kind: wrong value. `-x.abs()` of uint8 must wrap around modulo 256 before cat + sum; the
compiled kernel computes in int, so the sum is -800 instead of 224 (for two 200s); here -1606
instead of 1466. Returning `y` too (materializing it) hides the bug.
Reproduces on torch 2.13.0 (CPU).

User-style program: uint8 pixel arithmetic mixing abs, neg, cat and sum.
"""
import torch


def pixel_energy(pixels):
    y = -pixels.abs()
    return torch.cat([y, y]).sum()


def main():
    torch.manual_seed(0)
    pixels = torch.tensor([200, 200, 17, 255, 0, 128, 3], dtype=torch.uint8)
    compiled = torch.compile(pixel_energy)
    total = compiled(pixels)
    print("energy", int(total))
    return total


if __name__ == "__main__":
    main()
