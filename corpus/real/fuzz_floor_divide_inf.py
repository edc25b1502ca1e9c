"""Real Inductor bug (not planted), found on torch 2.13.0 (CPU) while checking by hand the class of
a `minify fuzz` finding (fuzz_remainder_inf_divisor.py).
Kind: wrong value. `torch.div(a, b, rounding_mode="floor")` (and `torch.floor_divide`) of a
negative finite `a` by `+inf` is -1.0 in eager (Python's `-3.0 // inf == -1.0`); Inductor's
C++ code returns -0.0. (For `inf // 2`, eager gives NaN and Inductor inf: the CPU side of
#188048, which was reported and closed for CUDA.) Reproduces on torch 2.13.0 (CPU).
User-style program: bucket signed offsets by a bucket width that is infinite for "no bucketing".
"""
import torch


def bucket(offset, width):
    return torch.div(offset, width, rounding_mode="floor")


def main():
    offset = torch.tensor([-3.0, 5.0, -0.5, 12.0] * 4)
    width = torch.tensor([float("inf"), 2.0, float("inf"), 5.0] * 4)
    buckets = torch.compile(bucket)(offset, width)
    print("buckets", buckets[:4].tolist())
    return buckets


if __name__ == "__main__":
    main()
