"""Control (user mistake, eager fails too): scatter with an index larger than src.

Source: https://github.com/pytorch/pytorch/issues/193816 ("torch.compile + Tensor.scatter raises
internal error", open, 2026). The index is (4, 16) while src is (4, 8): eager raises
`RuntimeError: Expected index [4, 16] to be no larger than src [4, 8]`; compiled raises the same
check from Dynamo's fake-tensor run (as TorchRuntimeError). Not a torch.compile bug.
Expected: minify exit 2, "fails without torch.compile too".
"""
import torch


@torch.compile
def fn(x, idx, src):
    return x.scatter(1, idx, src)


x = torch.zeros(8, 16)
idx = torch.randint(0, 16, (4, 16))
src = torch.randn(4, 8)
out = fn(x, idx, src)
