"""A wrong accumulator init for one reduction type (sum, prod, max, min).

C++ kernels take their init from `cpp.reduction_init` (the vectorized init is built from the
scalar one, so `cpp` covers both); Triton kernels from `ir.Reduction.default_accumulator`,
which seeds looped reductions and fills masked lanes of persistent ones (so on Triton the
bug shows when the reduced size is not a power of two, or the reduction loops). Forms:
`one` starts the accumulator at 1 (wrong for sum), `zero` at 0 (wrong for prod, and for
max/min only when every value is below/above 0: a bug that hides on most inputs).

Spec string: `reduction:TYPE[:FORM][@PATHS]`, e.g. `reduction:sum:one@cpp`, `reduction:max:zero`.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import BugSpec, check_choice, split_paths

REDUCTIONS = ("sum", "prod", "max", "min")
FORMS = ("one", "zero")
PATHS = ("cpp", "triton")
IDENTITY = {"sum": "zero", "prod": "one"}  # a form equal to the right init is no bug


def patch_reduction_init(reduction, form="one", paths=("cpp", "triton")):
    """Start every `reduction` accumulator at 1 (`one`) or 0 (`zero`) instead of its identity; returns undo."""
    import torch
    from torch._inductor import ir
    from torch._inductor.codegen import cpp
    from torch._inductor.virtualized import V

    value = 1 if form == "one" else 0
    undo_steps = []
    if "cpp" in paths:
        original_cpp = cpp.reduction_init

        def reduction_init(reduction_type, dtype):
            if reduction_type == reduction:
                return "true" if dtype == torch.bool and value else ("false" if dtype == torch.bool else str(value))
            return original_cpp(reduction_type, dtype)

        cpp.reduction_init = reduction_init
        undo_steps.append(lambda: setattr(cpp, "reduction_init", original_cpp))
    if "triton" in paths:
        original_ir = ir.Reduction.__dict__["default_accumulator"]

        def default_accumulator(reduction_type, dtype):
            in_triton = "TritonKernel" in [c.__name__ for c in type(V.kernel).__mro__]
            if reduction_type == reduction and in_triton:
                return bool(value) if dtype == torch.bool else (float(value) if dtype.is_floating_point else value)
            return original_ir.__func__(reduction_type, dtype)

        ir.Reduction.default_accumulator = staticmethod(default_accumulator)
        undo_steps.append(lambda: setattr(ir.Reduction, "default_accumulator", original_ir))

    def undo():
        for step in reversed(undo_steps):
            step()

    return undo


@dataclass(frozen=True)
class ReductionBug(BugSpec):
    """Every `reduction` accumulator starts at the wrong value on `paths`."""

    reduction: str
    form: str = "one"
    paths: tuple[str, ...] = PATHS

    target = "reduction"
    patcher = staticmethod(patch_reduction_init)

    def __post_init__(self):
        check_choice("reduction type", self.reduction, REDUCTIONS)
        check_choice("reduction form", self.form, FORMS)
        if IDENTITY.get(self.reduction) == self.form:
            raise ValueError(f"{self.reduction} with init {self.form} is the correct init: no bug")
        for path in self.paths:
            check_choice("reduction path", path, PATHS)

    def describe(self) -> str:
        return f"reduction bug: {self.reduction} accumulator starts at {self.form} on {'/'.join(self.paths)}"

    @staticmethod
    def parse(body: str) -> "ReductionBug":
        body, paths = split_paths(body, PATHS)
        parts = body.split(":")
        if not parts[0] or len(parts) > 2:
            raise ValueError(f"bad reduction injection {body!r}: expected reduction:TYPE[:FORM][@PATHS]")
        return ReductionBug(parts[0], *(parts[1:] or []), paths=paths)
