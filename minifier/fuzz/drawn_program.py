"""A fuzzed program as data: saved input tensors and a few op calls, and the Python source it
renders to (a function for people, a `Repro` module for the workers). Imports only torch."""
from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class Ref:
    """A tensor argument: a program input (x0, x1, ...) or an earlier step's output (v0, ...)."""

    name: str


@dataclass
class Step:
    op: str
    call: str
    args: list  # positional arguments in call order: Refs and literals
    kwargs: dict
    output: str

    def source(self) -> str:
        parts = [literal(a) for a in self.args] + [f"{k}={literal(v)}" for k, v in self.kwargs.items()]
        return f"{self.output} = {self.call}({', '.join(parts)})"


@dataclass
class Program:
    """A few op calls on saved input tensors; returns every step's output so a wrong value
    points at the step that first computes it."""

    inputs: dict[str, torch.Tensor]
    steps: list[Step]

    def ops(self) -> list[str]:
        return [s.op for s in self.steps]

    def body(self) -> list[str]:
        outs = ", ".join(s.output for s in self.steps)
        return [s.source() for s in self.steps] + [f"return ({outs}{',' if len(self.steps) == 1 else ''})"]

    def function_source(self, name: str = "program") -> str:
        lines = [f"def {name}({', '.join(self.inputs)}):"] + [f"    {line}" for line in self.body()]
        return "\n".join(lines) + "\n"

    def module_source(self) -> str:
        """`class Repro(torch.nn.Module)`: what a minify worker compiles."""
        lines = [f"    def forward(self, {', '.join(self.inputs)}):"] + [f"        {line}" for line in self.body()]
        return "import torch\n\n\nclass Repro(torch.nn.Module):\n" + "\n".join(lines) + "\n"

    def prefix(self, count: int) -> "Program":
        """The first `count` steps, with only the inputs they read."""
        kept = self.steps[:count]
        used = {r.name for step in kept for r in refs([step.args, step.kwargs])}
        return Program({n: t for n, t in self.inputs.items() if n in used}, list(kept))

    def input_list(self) -> list[torch.Tensor]:
        return list(self.inputs.values())

    def describe_inputs(self) -> list[str]:
        return [f"{name}: {describe(t)}" for name, t in self.inputs.items()]

    def key(self) -> str:
        """Same source and same inputs (values, strides, offsets) give the same key."""
        h = hashlib.sha256(self.module_source().encode())
        for t in self.inputs.values():
            h.update(repr((t.dtype, tuple(t.shape), t.stride(), t.storage_offset())).encode())
            h.update(bytes(t.untyped_storage()))
        return h.hexdigest()[:16]

    def __repr__(self) -> str:
        return "\n".join(["Program:", *[f"  # {d}" for d in self.describe_inputs()],
                          *[f"  {line}" for line in self.function_source().splitlines()]])


def refs(value) -> list[Ref]:
    """Every Ref inside an argument (lists, tuples and dicts included)."""
    if isinstance(value, Ref):
        return [value]
    if isinstance(value, (list, tuple)):
        return [r for v in value for r in refs(v)]
    if isinstance(value, dict):
        return [r for v in value.values() for r in refs(v)]
    return []


def describe(t: torch.Tensor) -> str:
    dtype = str(t.dtype).replace("torch.", "")
    contiguous = t.is_contiguous()
    layout = "" if contiguous and not t.storage_offset() else f" stride={t.stride()} offset={t.storage_offset()}"
    return f"{dtype}{list(t.shape)}{layout}"


class Unrenderable(Exception):
    """An argument that cannot be written as source (a device, a generator, a complex number)."""


def literal(value) -> str:
    if isinstance(value, Ref):
        return value.name
    if value is None or isinstance(value, (bool, int, str)):
        return repr(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, (torch.dtype, torch.memory_format, torch.layout)):
        return str(value)
    if isinstance(value, torch.Size):
        return repr(tuple(value))
    if isinstance(value, tuple):
        inner = ", ".join(literal(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, list):
        return f"[{', '.join(literal(v) for v in value)}]"
    if value is Ellipsis:
        return "..."
    raise Unrenderable(type(value).__name__)
