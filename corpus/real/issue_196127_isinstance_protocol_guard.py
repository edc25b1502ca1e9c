"""torch.compile: isinstance() with a runtime_checkable Protocol is folded without a guard.

Public report: https://github.com/pytorch/pytorch/issues/196127 (open, 2026). A Protocol with a
data member checks the instance (does it have `ports`?), but Dynamo guards only on the type, so
a second object of the same class without the attribute reuses the first call's graph: x + 1
instead of x - 1. Every backend, `eager` included. torch 2.13.0, CPU.
"""
from typing import Protocol, runtime_checkable

import torch


@runtime_checkable
class HasPorts(Protocol):
    ports: tuple[int, ...]


class Obj:
    def __init__(self, with_ports):
        if with_ports:
            self.ports = (1, 2)


def fn(x, o):
    return x + 1 if isinstance(o, HasPorts) else x - 1


x = torch.zeros(3)
compiled = torch.compile(fn)
for with_ports in (True, False):
    want = fn(x, Obj(with_ports))
    got = compiled(x, Obj(with_ports))
    print("with ports" if with_ports else "no ports", "eager", want.tolist(), "compiled", got.tolist())
    torch.testing.assert_close(got, want)
