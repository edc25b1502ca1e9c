"""What every non-codegen injection spec has in common: a dict form, a string form, and code.

Each spec class (a wrong lowering, a wrong decomposition, a fusion-only bug, a wrong
reduction init, an off-by-one index) names a `patcher`: one self-contained function that
plants the bug and returns a function that removes it. The same function object is called
in-process (`apply`) and embedded verbatim in repro.py (`source`), so the planted bug is the
same everywhere. Patchers import only torch, never this project.
"""
from __future__ import annotations

import ast
import inspect
from dataclasses import asdict, dataclass, fields
from typing import Callable, ClassVar

# Accuracy forms that change a computed value (lowering, decomposition): what each one does.
VALUE_FORMS = ("add_one", "negate", "double", "constant", "truncate")


@dataclass(frozen=True)
class BugSpec:
    """Base for spec dataclasses; subclasses set `target` and `patcher`, and list their fields."""

    target: ClassVar[str] = ""
    patcher: ClassVar[Callable[..., Callable[[], None]]]

    def patch_args(self) -> dict:
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v) for f in fields(self)}

    def apply(self) -> Callable[[], None]:
        """Plant the bug in this process; returns the undo function."""
        return type(self).patcher(**self.patch_args())

    def to_dict(self) -> dict:
        return {"target": self.target, **asdict(self)}

    @classmethod
    def from_dict(cls, d: dict) -> "BugSpec":
        names = {f.name for f in fields(cls)}
        values = {k: (tuple(v) if isinstance(v, list) else v) for k, v in d.items() if k in names}
        return cls(**values)

    def describe(self) -> str:
        args = ", ".join(f"{k}={v}" for k, v in self.patch_args().items() if v is not None)
        return f"{self.target} bug ({args})"

    def call_source(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.patch_args().items())
        return f"{type(self).patcher.__name__}({args})"


def function_source(fn: Callable) -> str:
    """A function's source without its docstring (repro.py stays short)."""
    node = ast.parse(inspect.getsource(fn)).body[0]
    if isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant):
        node.body = node.body[1:]
    return ast.unparse(node)


def split_paths(spec: str, default: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """`body@a,b` -> (body, ("a", "b")); no `@` -> (spec, default)."""
    if "@" not in spec:
        return spec, default
    body, where = spec.split("@", 1)
    return body, tuple(p for p in where.split(",") if p)


def check_choice(what: str, value, choices) -> None:
    if value not in choices:
        raise ValueError(f"bad {what} {value!r}; choose from {', '.join(map(str, choices))}")
