"""A mistake planted in Dynamo itself, made while it traces, before any graph reaches a backend.

Kinds:
- `fold`: a builtin applied to Python ints (e.g. `operator.mul` on two module attributes) is
  folded while tracing to a wrong constant (the right one plus one). The graph Dynamo hands on
  already holds the wrong value, so every backend, `eager` included, computes it, and each
  captured graph matches eager on its own inputs: only the program shows the bug.
- `crash`: tracing a call of the builtin raises inside torch._dynamo (an internal error),
  so no graph is ever handed to a backend.

Spec string: `dynamo:KIND:BUILTIN`, e.g. `dynamo:fold:mul`, `dynamo:crash:abs` (BUILTIN is a
name in `builtins` or else `operator`).
"""
from __future__ import annotations

import builtins
import operator
from dataclasses import dataclass

from compiler.inject_spec import BugSpec, check_choice

KINDS = ("fold", "crash")


def patch_dynamo_builtin(kind, builtin):
    """Make Dynamo fold `builtin` on ints wrongly (`fold`) or crash tracing it (`crash`); returns undo."""
    import builtins
    import operator

    from torch._dynamo.variables import builtin as dynamo_builtin
    from torch._dynamo.variables.constant import ConstantVariable

    target = getattr(builtins, builtin, None) or getattr(operator, builtin)
    original = dynamo_builtin.BuiltinVariable.call_function

    def call_function(self, tx, args, kwargs):
        if self.fn is target and kind == "crash":
            raise RuntimeError(f"injected Dynamo crash while tracing {builtin}")
        ints = all(isinstance(a, ConstantVariable) and type(a.value) is int for a in args)
        if self.fn is target and kind == "fold" and args and ints and not kwargs:
            return ConstantVariable.create(target(*(a.value for a in args)) + 1)
        return original(self, tx, args, kwargs)

    dynamo_builtin.BuiltinVariable.call_function = call_function

    def undo():
        dynamo_builtin.BuiltinVariable.call_function = original

    return undo


@dataclass(frozen=True)
class DynamoBug(BugSpec):
    """Dynamo folds or traces `builtin` wrongly (see the module docstring)."""

    kind: str
    builtin: str

    target = "dynamo"
    patcher = staticmethod(patch_dynamo_builtin)

    def __post_init__(self):
        check_choice("dynamo injection kind", self.kind, KINDS)
        if not callable(getattr(builtins, self.builtin, None) or getattr(operator, self.builtin, None)):
            raise ValueError(f"unknown builtin {self.builtin!r}: a name in operator or builtins")

    def describe(self) -> str:
        what = "folds ints wrongly (+1)" if self.kind == "fold" else "crashes while tracing"
        return f"Dynamo bug: {self.builtin} {what}"

    @staticmethod
    def parse(body: str) -> "DynamoBug":
        parts = body.split(":")
        if len(parts) != 2 or not all(parts):
            raise ValueError(f"bad dynamo injection {body!r}: expected dynamo:KIND:BUILTIN")
        return DynamoBug(*parts)
