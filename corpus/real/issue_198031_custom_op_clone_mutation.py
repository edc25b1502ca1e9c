"""torch.compile: y = x.clone(); reverse_into(y, x) runs as reverse_into(x, x) for a custom op that mutates x.

Public report: https://github.com/pytorch/pytorch/issues/198031 (open, 2026; reported on 2.14
and nightly, reproduces on torch 2.13.0 CPU). `mylib::reverse_into` is the user's own custom op
(`torch.library.custom_op`, mutates_args=("dst",)). Inductor's reinplacing drops the clone,
so the op reads the tensor it is writing: eager gives x reversed, compiled gives
[0, 1, 2, 3, 3, 2, 1, 0] (and the returned x * 2 with it). Eager and aot_eager are right.
"""
import torch


@torch.library.custom_op("mylib::reverse_into", mutates_args=("dst",))
def reverse_into(src: torch.Tensor, dst: torch.Tensor) -> None:
    n = src.shape[0]
    for k in range(n):
        dst[n - 1 - k] = src[k]


def f(x):
    y = x.clone()
    reverse_into(y, x)
    return x * 2.0


x = torch.arange(8.0)
a, b = x.clone(), x.clone()
out_e = f(a)
out_c = torch.compile(f)(b)
print("eager", a.tolist(), "compiled", b.tolist())
torch.testing.assert_close(out_c, out_e)
torch.testing.assert_close(b, a)
