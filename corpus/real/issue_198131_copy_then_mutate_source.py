"""torch.compile: dst[:] = src[:]; src.add_(1) copies the *updated* src into dst.

Public report: https://github.com/pytorch/pytorch/issues/198131 (open, 2026). Inductor's
remove_noop_ops replaces the copy of input src by src itself, and src is mutated before the copy
into dst runs: dst gets src + 1 (all 12 elements off by 1). Eager and aot_eager are right.
torch 2.13.0, CPU.
"""
import torch


def fn(dst, src):
    dst[0:, :] = src[0:, :]
    src.add_(1)
    return src


dst_e, src_e = torch.zeros(3, 4), torch.arange(12.0).view(3, 4)
dst_c, src_c = dst_e.clone(), src_e.clone()
out_e = fn(dst_e, src_e)
out_c = torch.compile(fn)(dst_c, src_c)
print("eager dst[0]", dst_e[0].tolist(), "compiled dst[0]", dst_c[0].tolist())
torch.testing.assert_close(out_c, out_e)
torch.testing.assert_close(dst_c, dst_e)
