"""Real Inductor bug (not planted), found by `minify fuzz` on torch 2.13.0 (CPU).
Kind: wrong dtype. `torch.any` of a uint8 tensor is uint8 in eager (documented: "for uint8 the
dtype of output is uint8 itself") and bool under Inductor, so arithmetic on it changes value
(`any(x) * 200 + 100` wraps to 44 in uint8, 300 compiled). Public report #198081 (open).
Reproduces on torch 2.13.0 (CPU).
User-style program: a uint8 "any pixel lit" flag scaled into a uint8 brightness level.
"""
import torch


def lit_level(mask):
    return torch.any(mask) * 200 + 100


def main():
    mask = torch.tensor([[0, 3], [0, 0]], dtype=torch.uint8)
    level = torch.compile(lit_level)(mask)
    print("level", level.item(), level.dtype)
    return level


if __name__ == "__main__":
    main()
