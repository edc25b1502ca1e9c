"""torch.compile(dynamic=True): list.pop() with an index computed from a tensor's size crashes Dynamo.

Public report: https://github.com/pytorch/pytorch/issues/196285 (closed 2026; the fix is not in
2.13). With dynamic shapes `x.shape[0] - 3` is a SymInt, and list.pop of it raises
`InternalTorchDynamoError: AsPythonConstantNotImplementedError: SymNodeVariable() is not a
constant` (any backend). Eager pops the element. torch 2.13.0, CPU.
"""
import torch


def drop_one(x):
    items = [x * i for i in range(6)]
    v = items.pop(x.shape[0] - 3)
    return v + len(items)


x = torch.randn(5)
eager = drop_one(x)
compiled = torch.compile(drop_one, dynamic=True)(x)
torch.testing.assert_close(compiled, eager)
