"""Numerics, not a miscompile: fp16 casts before an add, fused by Inductor.

Public report: https://github.com/pytorch/pytorch/issues/182131 (closed; same pattern #183761 was
closed as intended: Inductor elides fp16 downcast/upcast pairs inside a fused kernel, and
TORCHINDUCTOR_EMULATE_PRECISION_CASTS=1 makes it match eager bit for bit).
Eager sum 20.5996, compiled 20.6000, max elementwise diff 0.00098 (one fp16 ulp); against an fp64
reference the compiled result is closer (max error 0.00039) than eager's (0.00078).
Reproduces on torch 2.13.0 (CPU). Expected answer: numerics (no repro).
"""
import torch


def blend(x, c):
    z = torch.where(c, torch.full_like(x, 0.5), torch.full_like(x, -0.5))
    y = z.to(torch.float16) + x.to(torch.float16)
    return y, y.float().sum()


def main():
    x = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) / 10
    c = (torch.arange(24) % 5 == 0).reshape(2, 3, 4)
    y, total = torch.compile(blend, fullgraph=True)(x, c)
    print("sum", total.item())
    return y, total


if __name__ == "__main__":
    main()
