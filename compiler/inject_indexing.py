"""An off-by-one in indirect indexing: loads through a computed index read the next element.

Ops that read through an index tensor (embedding, gather, index, index_select) go through the
kernel's `indirect_indexing`. The patched version shifts the index before the bounds check:
`off_by_one` reads element (i + 1) mod size (always in bounds, so results are wrong rather
than a crash), `first` always reads element 0. Plain strided loads are untouched, so only
the graph's indexing ops are at fault.

Spec string: `indexing[:FORM][@PATHS]`, e.g. `indexing:off_by_one@cpp,cppvec`.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import BugSpec, check_choice, split_paths

FORMS = ("off_by_one", "first")
ALL_PATHS = ("cpp", "cppvec", "triton")


def patch_indirect_indexing(form="off_by_one", paths=("cpp", "cppvec", "triton")):
    """Shift every indirect index on `paths` (see module docstring); returns undo."""
    from torch._inductor.codegen import common

    proxy = common.CSEProxy
    original = proxy.__dict__["indirect_indexing"]

    def kernel_path(kernel):
        names = [c.__name__ for c in type(kernel).__mro__]
        for name, path in (("CppVecKernel", "cppvec"), ("CppKernel", "cpp"), ("TritonKernel", "triton")):
            if name in names:
                return path
        return None

    def indirect_indexing(self, var, size, check=True, wrap_neg=True):
        if kernel_path(self.kernel) in paths:
            if form == "first":
                var = self.mul(var, self.constant(0, var.dtype))
            else:
                bound = self.index_expr(size, var.dtype)
                var = self.remainder(self.add(var, self.constant(1, var.dtype)), bound)
        return original(self, var, size, check, wrap_neg)

    proxy.indirect_indexing = indirect_indexing

    def undo():
        proxy.indirect_indexing = original

    return undo


@dataclass(frozen=True)
class IndexingBug(BugSpec):
    """Indirect loads on `paths` use a shifted index (`form`)."""

    form: str = "off_by_one"
    paths: tuple[str, ...] = ALL_PATHS

    target = "indexing"
    patcher = staticmethod(patch_indirect_indexing)

    def __post_init__(self):
        check_choice("indexing form", self.form, FORMS)
        for path in self.paths:
            check_choice("codegen path", path, ALL_PATHS)

    def describe(self) -> str:
        return f"indexing bug: indirect loads read {self.form} on {'/'.join(self.paths)}"

    @staticmethod
    def parse(body: str) -> "IndexingBug":
        body, paths = split_paths(body, ALL_PATHS)
        parts = [p for p in body.split(":") if p]
        if len(parts) > 1:
            raise ValueError(f"bad indexing injection {body!r}: expected indexing[:FORM][@PATHS]")
        return IndexingBug(*parts, paths=paths)
