"""Real bug: torch.minimum of -0.0 and +0.0 under torch.compile on CPU.

https://github.com/pytorch/pytorch/issues/194347 (open; the CUDA path was fixed by #186933).
Eager returns -0.0 (sign bit set); Inductor's C++ code returns +0.0, for float16, bfloat16,
float32 and float64 alike. Reproduces on torch 2.13 CPU. minify: the signed_zero rung.
"""
import torch


def clip_below(x, ceiling):
    return torch.minimum(x, ceiling)


def main():
    x = torch.tensor([-0.0, 1.5, -2.0])
    ceiling = torch.zeros(3)
    out = torch.compile(clip_below)(x, ceiling)
    print("compiled:", out, "sign bits:", out.signbit().tolist())


if __name__ == "__main__":
    main()
