"""Numerics, not a miscompile: a matmul result cast to bf16, then an fp32 bias added.

Public report: https://github.com/pytorch/pytorch/issues/181568 (closed; the agent's mitigation is
TORCHINDUCTOR_EMULATE_PRECISION_CASTS=1). Inductor fuses the bf16 cast with the add and does not
round the intermediate to bf16: max diff to eager 0.031, but against an fp64 reference compiled's
max error is 3.2e-6 and eager's 0.031 (compiled is far closer).
Reproduces on torch 2.13.0 (CPU). Expected answer: numerics (no repro).
"""
import torch


def project(x, w, b):
    y = (x @ w).to(torch.bfloat16) + b
    return y, y.mean(-1)


def main():
    torch.manual_seed(119)
    x = torch.randn(2, 15, 32)
    w = torch.randn(32, 17)
    b = torch.randn(17)
    y, m = torch.compile(project, fullgraph=True, dynamic=True)(x, w, b)
    print("mean of means", m.mean().item())
    return y, m


if __name__ == "__main__":
    main()
