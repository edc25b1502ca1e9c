"""torch.compile: as_strided_ on a tensor does not change that tensor's size and stride.

Public report: https://github.com/pytorch/pytorch/issues/185888 (closed 2026; the fix is not in
2.13). In eager, `y = x.as_strided_((2, 2), (2, 1))` changes x itself (y is x): x.size() is
(2, 2) and x.stride() (2, 1). Compiled, y has the new metadata but x keeps size (4,) and stride
(1,). Every backend fails, `eager` included, with dynamic=True or False. torch 2.13.0, CPU.
"""
import torch


def fn():
    x = torch.arange(4.0, dtype=torch.float32)
    y = x.as_strided_((2, 2), (2, 1))
    observer = torch.max(y)
    return y, x.size(), y.size(), x.stride()


eager = fn()
compiled = torch.compile(fn, fullgraph=True, dynamic=True)()
print("eager x.size, y.size, x.stride:", eager[1:])
print("compiled:                     ", compiled[1:])
torch.testing.assert_close(compiled[0], eager[0])
assert tuple(compiled[1]) == tuple(eager[1]), f"x.size() {tuple(compiled[1])} vs eager {tuple(eager[1])}"
assert tuple(compiled[3]) == tuple(eager[3]), f"x.stride() {tuple(compiled[3])} vs eager {tuple(eager[3])}"
