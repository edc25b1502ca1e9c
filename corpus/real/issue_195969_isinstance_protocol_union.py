"""torch.compile: isinstance(o, ProtoA | ProtoB) is False when a Protocol has a data member.

Public report: https://github.com/pytorch/pytorch/issues/195969 (closed 2026; the fix is not in
2.13). Dynamo evaluates the union (or tuple) with issubclass() on the type, which raises
TypeError for a runtime_checkable Protocol with non-method members, and its fallback
`arg_type in isinstance_type_tuple` answers False: the compiled function takes the x - 1 branch
where eager takes x + 1. No graph break, fullgraph=True compiles; every backend. torch 2.13.0,
CPU.
"""
from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class HasPorts(Protocol):  # non-method (data) member
    ports: tuple[int, ...]


@runtime_checkable
class HasFoo(Protocol):  # method member
    def foo(self) -> int: ...


class Obj:
    ports = (1, 2)

    def foo(self) -> int:
        return 1


def route(o, x):
    return x + 1 if isinstance(o, HasPorts | HasFoo) else x - 1


x = torch.zeros(2)
eager = route(Obj(), x)
compiled = torch.compile(route, fullgraph=True)(Obj(), x)
print("eager", eager.tolist(), "compiled", compiled.tolist())
torch.testing.assert_close(compiled, eager)
