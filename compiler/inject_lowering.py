"""A wrong Inductor lowering for one aten op: the bug lives in Inductor's IR, on every device.

The op's entry in `torch._inductor.lowering.lowerings` is wrapped so the IR it builds computes
the right value and then a wrong one from it (`add_one`, `negate`, ...), or so that lowering
raises (`compile_error`). Eager, aot_eager and aot_eager_decomp_partition never lower, so
only the `inductor` stage shows it. The op must reach Inductor undecomposed (e.g. `sigmoid`,
`tanh`, `exp`, `relu`, `mul`; not `gelu` or `silu`, which Inductor decomposes first). A
functional collective's op is named with its namespace: `_c10d_functional.wait_tensor`, and so is
a custom op (`mylib.scale`): Inductor runs it as a fallback kernel, whose result is made wrong
(planted after the op's definition, which must exist when it is planted).

Spec string: `lowering:OP[.OVERLOAD][:KIND[:FORM[:symbolic]]]`, e.g. `lowering:sigmoid:accuracy:negate`.
`symbolic` makes the lowering wrong only where an input's size is symbolic (dynamic shapes):
a bug that a replay with static shapes cannot show.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import VALUE_FORMS, BugSpec, check_choice

KINDS = ("accuracy", "compile_error")


def patch_lowering(op, kind="accuracy", form="add_one", only_symbolic=False):
    """Wrap Inductor's lowering of aten `op` (all overloads, or `op.overload`); returns undo."""
    import torch
    from torch._inductor import lowering
    aten, table = torch.ops.aten, lowering.lowerings
    ns = "_c10d_functional."  # `lowering:_c10d_functional.wait_tensor:accuracy:double`: a collective's op
    space, name = (torch.ops._c10d_functional, op[len(ns):]) if op.startswith(ns) else (aten, op)
    custom = space is aten and "." in op and not hasattr(aten, op.split(".")[0])  # `mylib.scale`: a custom op
    if custom:
        space, name = getattr(torch.ops, op.split(".")[0]), op.split(".", 1)[1]
    packet_name, _, overload = name.partition(".")
    packet = getattr(space, packet_name)
    names = [overload] if overload else list(packet.overloads())
    made = [getattr(packet, n) for n in names if custom and getattr(packet, n) not in table]
    for target in made:  # lowered as Inductor lowers an op it does not know: a fallback kernel, made to be wrapped
        lowering.make_fallback(target, warn=False)
    targets = [getattr(packet, n) for n in names if getattr(packet, n) in table]
    if not targets:
        raise ValueError(f"Inductor has no lowering for aten.{op}")

    def wrong(box):
        if not hasattr(box, "get_dtype"):
            return box
        if box.get_dtype() == torch.bool:
            return table[aten.logical_not.default](box)
        if form == "negate":
            return table[aten.neg.default](box)
        if form == "double":
            return table[aten.mul.Tensor](box, 2)
        if form == "constant":
            return table[aten.add.Tensor](table[aten.mul.Tensor](box, 0), 3)
        if form == "truncate":
            return table[aten.trunc.default](box)
        return table[aten.add.Tensor](box, 1)

    originals = {}
    for target in targets:
        original = table[target]

        def buggy(*args, _original=original, **kwargs):
            sizes = [s for a in args if hasattr(a, "get_size") for s in a.get_size()]
            if only_symbolic and all(getattr(s, "is_number", True) for s in sizes):
                return _original(*args, **kwargs)
            if kind == "compile_error":
                raise RuntimeError(f"injected lowering bug: aten.{op} cannot be lowered")
            out = _original(*args, **kwargs)
            if isinstance(out, (tuple, list)):  # e.g. (output, mean, rstd): only the output is wrong
                return (wrong(out[0]), *out[1:])
            return wrong(out)

        originals[target] = original
        table[target] = buggy

    def undo():
        for target, original in originals.items():
            table[target] = original
        for target in made:  # Inductor makes its own fallback again, at the next compile
            table.pop(target, None), lowering.fallbacks.discard(target)

    return undo


@dataclass(frozen=True)
class LoweringBug(BugSpec):
    """Inductor lowers aten `op` wrongly (accuracy `form`) or not at all (compile_error)."""

    op: str
    kind: str = "accuracy"
    form: str | None = None
    when: str | None = None  # "symbolic": only where an input's size is symbolic

    target = "lowering"
    patcher = staticmethod(patch_lowering)

    def __post_init__(self):
        check_choice("lowering injection kind", self.kind, KINDS)
        if self.form is not None:
            check_choice("accuracy form", self.form, VALUE_FORMS)
        if self.when is not None:
            check_choice("lowering injection condition", self.when, ("symbolic",))

    def patch_args(self) -> dict:
        return {"op": self.op, "kind": self.kind, "form": self.form or "add_one",
                "only_symbolic": self.when == "symbolic"}

    @staticmethod
    def parse(body: str) -> "LoweringBug":
        parts = body.split(":")
        if not parts[0] or len(parts) > 4:
            raise ValueError(f"bad lowering injection {body!r}: expected lowering:OP[:KIND[:FORM[:symbolic]]]")
        return LoweringBug(parts[0], *(parts[1:] or []))
