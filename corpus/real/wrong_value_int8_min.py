"""Real Inductor bug (not planted): min/argmin over 16 or more uint8/int8 elements returns 0.

Public report: https://github.com/pytorch/pytorch/issues/191499 (open; reported for Apple Silicon,
a comment shows it on x86-64 from 16 elements on). Kind: wrong value. For positive uint8 data,
eager's min is 1 (argmin 1); Inductor's vectorized reduction returns 0 (argmin 0), and for
all-negative int8, max is 0 and argmax a garbage index. Reproduces on torch 2.13.0 (CPU).

User-style program: darkest pixel and its position in a uint8 image row.
"""
import torch


def darkest(row):
    return row.min(), row.argmin()


def main():
    row = torch.tensor([5, 1, 100, 3, 7, 8, 9, 13, 100, 120, 127, 2, 6, 4, 11, 12, 90, 80], dtype=torch.uint8)
    compiled = torch.compile(darkest)
    value, index = compiled(row)
    print("darkest", int(value), "at", int(index))
    return value, index


if __name__ == "__main__":
    main()
