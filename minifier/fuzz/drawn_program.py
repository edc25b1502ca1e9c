"""A fuzzed program as data: saved input tensors and a few op calls, and the Python source it
renders to (a function for people, a `Repro` module for the workers). Imports only torch (and
compiler.grads, which imports only torch)."""
from __future__ import annotations

import functools
import hashlib
import itertools
import math
import warnings
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
    dynamic: bool = False  # compiled with dynamic=True (symbolic sizes)
    backward: bool = False  # floating inputs require grad; their gradients are checked (compiler.grads)

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
        return Program({n: t for n, t in self.inputs.items() if n in used}, list(kept), self.dynamic, self.backward)

    def eager_values(self) -> dict:
        """Every input's and step's value, computed eagerly (no grad)."""
        values: dict = dict(self.inputs)
        with torch.no_grad():
            for step in self.steps:
                fn = functools.reduce(getattr, step.call.split(".")[1:], torch)
                values[step.output] = fn(*resolve(step.args, values), **resolve(step.kwargs, values))
        return values

    def without_step(self, index: int, values: dict) -> "Program":
        """The program less step `index`: a later step that read its output reads a new input
        holding that output's value (from `values`, see eager_values)."""
        gone = Ref(self.steps[index].output)
        name = next(f"x{i}" for i in itertools.count(len(self.inputs)) if f"x{i}" not in self.inputs)

        def swap(v):
            if isinstance(v, (list, tuple)):
                return type(v)(swap(x) for x in v)
            if isinstance(v, dict):
                return {k: swap(x) for k, x in v.items()}
            return Ref(name) if v == gone else v

        steps = [Step(s.op, s.call, swap(s.args), swap(s.kwargs), s.output) for j, s in enumerate(self.steps)
                 if j != index]
        used = {r.name for step in steps for r in refs([step.args, step.kwargs])}
        inputs = {n: t for n, t in {**self.inputs, name: values[gone.name]}.items() if n in used}
        return Program(inputs, steps, self.dynamic, self.backward)

    def differentiable(self) -> bool:
        """Whether a backward pass can check it: a floating input, a floating output that needs
        a gradient, and eager runs backward (each op has a derivative)."""
        from compiler.grads import requiring_grad, weighted_loss

        inputs = requiring_grad(self.input_list())
        if not any(t.requires_grad for t in inputs):
            return False
        values = dict(zip(self.inputs, inputs))
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                for step in self.steps:
                    fn = functools.reduce(getattr, step.call.split(".")[1:], torch)
                    values[step.output] = fn(*resolve(step.args, values), **resolve(step.kwargs, values))
                loss = weighted_loss([values[step.output] for step in self.steps])
                if loss is not None:
                    loss.backward()
        except Exception:
            return False
        return loss is not None

    def input_list(self) -> list[torch.Tensor]:
        return list(self.inputs.values())

    def describe_inputs(self) -> list[str]:
        return [f"{name}: {describe(t)}" for name, t in self.inputs.items()]

    def key(self) -> str:
        """Same source and same inputs (values, strides, offsets) give the same key."""
        h = hashlib.sha256(self.module_source().encode() + (b"dynamic" if self.dynamic else b"")
                           + (b"backward" if self.backward else b""))
        for t in self.inputs.values():
            h.update(repr((t.dtype, tuple(t.shape), t.stride(), t.storage_offset())).encode())
            h.update(bytes(t.untyped_storage()))
        return h.hexdigest()[:16]

    def __repr__(self) -> str:
        flags = (" (dynamic=True)" if self.dynamic else "") + (" (backward)" if self.backward else "")
        return "\n".join(["Program:" + flags,
                          *[f"  # {d}" for d in self.describe_inputs()],
                          *[f"  {line}" for line in self.function_source().splitlines()]])


def resolve(value, values: dict):
    """`value` with every Ref replaced by its value."""
    if isinstance(value, Ref):
        return values[value.name]
    if isinstance(value, (list, tuple)):
        return type(value)(resolve(v, values) for v in value)
    if isinstance(value, dict):
        return {k: resolve(v, values) for k, v in value.items()}
    return value


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
