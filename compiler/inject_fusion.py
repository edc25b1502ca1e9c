"""A codegen bug that only exists when two ops share one kernel.

The `consumer` op is printed wrongly only when one of its operands was computed by the
`producer` op earlier in the same kernel (inlined, or fused by the scheduler, where the load
of the producer's buffer becomes the stored value). When the producer's result reaches the
consumer through memory, from another kernel, another graph or an input, the consumer is
printed correctly. So a minimal repro needs both ops, and cutting the producer out (feeding
its value as an input) makes the bug disappear: exactly what a fusion bug looks like.

The wrong code uses the codegen templates of `compiler.inject_templates` (`kind`/`form`), on the
chosen kernel kinds (`cpp` scalar, `cppvec`, `triton`).

Spec string: `fusion:PRODUCER+CONSUMER[:KIND[:FORM]][@PATHS]`, e.g. `fusion:sigmoid+mul:accuracy:double@cpp,cppvec`.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import BugSpec, check_choice, split_paths
from compiler.inject_templates import ALL_PATHS, KINDS, TEMPLATES


def patch_fusion(producer, consumer, templates, paths=("cpp", "cppvec", "triton")):
    """Print `consumer` by `templates[path]` when an operand comes from `producer` in the same kernel; returns undo."""
    import weakref

    from torch._inductor.codegen import common

    proxy = common.CSEProxy
    original = proxy.__dict__["_default"]
    produced = weakref.WeakKeyDictionary()  # kernel -> names of values `producer` computed in it

    def kernel_path(kernel):
        names = [c.__name__ for c in type(kernel).__mro__]
        for name, path in (("CppVecKernel", "cppvec"), ("CppKernel", "cpp"), ("TritonKernel", "triton")):
            if name in names:
                return path
        return None

    def _default(self, name, args, kwargs):
        out = original(self, name, args, kwargs)
        path = kernel_path(self.kernel)
        if path not in paths or not hasattr(out, "name"):
            return out
        if name == producer:
            produced.setdefault(self.kernel, set()).add(out.name)
        elif name == consumer and any(getattr(a, "name", None) in produced.get(self.kernel, ()) for a in args):
            code = templates[path].format(out=out, x=args[0])
            wrong = self.kernel.cse.generate(self.kernel.compute, code, dtype=out.dtype, shape=out.shape)
            if hasattr(wrong, "update_on_args"):
                wrong.update_on_args(name, (out,), {})
            return wrong
        return out

    proxy._default = _default

    def undo():
        proxy._default = original

    return undo


@dataclass(frozen=True)
class FusionBug(BugSpec):
    """`consumer` is miscompiled only when fused with `producer` (same kernel)."""

    producer: str
    consumer: str
    kind: str = "accuracy"
    form: str | None = None
    paths: tuple[str, ...] = ALL_PATHS

    target = "fusion"
    patcher = staticmethod(patch_fusion)

    def __post_init__(self):
        check_choice("fusion injection kind", self.kind, KINDS)
        if self.form is not None:
            check_choice("form", (self.kind, self.form), list(TEMPLATES))
        for path in self.paths:
            check_choice("codegen path", path, ALL_PATHS)
        if not self.patch_args()["paths"]:
            raise ValueError(f"the {self.form} form is printed on {'/'.join(TEMPLATES[(self.kind, self.form)])} only")

    def patch_args(self) -> dict:
        form = self.form or ("add_one" if self.kind == "accuracy" else None)
        printed = {p: t for p, t in TEMPLATES[(self.kind, form)].items() if p in self.paths}  # a hang: C++ alone
        return {"producer": self.producer, "consumer": self.consumer, "templates": printed,
                "paths": [p for p in self.paths if p in printed]}

    def describe(self) -> str:
        return (f"fusion bug: {self.consumer} {self.kind} ({self.form or self.kind}) when fed by {self.producer} "
                f"in the same kernel, on {'/'.join(self.paths)}")

    @staticmethod
    def parse(body: str) -> "FusionBug":
        body, paths = split_paths(body, ALL_PATHS)
        parts = body.split(":")
        ops = parts[0].split("+")
        if len(ops) != 2 or not all(ops) or len(parts) > 3:
            raise ValueError(f"bad fusion injection {body!r}: expected fusion:PRODUCER+CONSUMER[:KIND[:FORM]][@PATHS]")
        return FusionBug(ops[0], ops[1], *(parts[1:] or []), paths=paths)
