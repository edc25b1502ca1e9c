"""Real report: a float16 multiplication that overflows in eager does not under torch.compile.

https://github.com/pytorch/pytorch/issues/183607 (open, "correctness (silent)"). Eager casts x
to float16 and squares it in float16: 5000**2 overflows to inf. Inductor keeps the fused
product in float32 and returns 25000000.0. The program itself casts to float16, so the fp64
reference (which keeps the cast) overflows too: compiled disagrees with both. Reproduces on
torch 2.13 CPU. minify: the nan_inf rung (3 ops: to, mul, to); blame: keeping mul out of the
kernel of the cast after it makes it pass (Inductor eliding the float16 round trip, its
documented trade-off; emulate_precision_casts also makes eager's inf come back).
"""
import torch


def square_fp16(x):
    y = x.to(torch.float16)
    return (y * y).to(torch.float32)


def main():
    x = torch.tensor([5000.0, 2.0])
    out = torch.compile(square_fp16)(x)
    print("compiled:", out.tolist())


if __name__ == "__main__":
    main()
