"""A wrong decomposition in the table Inductor hands to AOTAutograd.

Inductor decomposes ops while AOTAutograd traces (`select_decomp_table`), and the
`aot_eager_decomp_partition` backend uses the very same table, so a wrong entry shows from
that stage on and never at `aot_eager`: the stage search must name the decomposition stage,
not Inductor. The entry for `op` computes the right value (through the original
decomposition, or the op itself where Inductor has none) and then a wrong one from it, or
raises (`compile_error`). Ops decomposed only in backward graphs (`tanh_backward`,
`gelu_backward`, ...) give bugs that only a training step shows.

Spec string: `decomposition:OP[.OVERLOAD][:KIND[:FORM]]`, e.g. `decomposition:gelu:accuracy:double`.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import VALUE_FORMS, BugSpec, check_choice

KINDS = ("accuracy", "compile_error")


def patch_decomposition(op, kind="accuracy", form="add_one"):
    """Replace Inductor's decomposition of aten `op` by a wrong one; returns undo. Self-contained
    (it imports only torch): a repro.py that plants the bug carries this function's source."""
    import torch
    from torch._inductor import decomposition

    packet_name, _, overload = op.partition(".")
    packet = getattr(torch.ops.aten, packet_name)
    # select_decomp_table() returns one of these two dicts (the second is cached): patch both.
    tables = [decomposition.decompositions, decomposition.fast_random_decomps()]
    names = [overload] if overload else [n for n in packet.overloads()
                                         if any(getattr(packet, n) in t for t in tables)] or ["default"]
    targets = [getattr(packet, n) for n in names]
    busy = set()  # ops whose wrong decomposition is running: trace the op itself inside it
    forms = {"negate": lambda t: -t, "double": lambda t: t * 2, "constant": lambda t: t * 0 + 3,
             "truncate": torch.trunc}

    def wrong(t):
        if not isinstance(t, torch.Tensor):
            return t
        return ~t if t.dtype == torch.bool else forms.get(form, lambda t: t + 1)(t)

    def right(target, original, args, kwargs):
        """The right value: the original decomposition, else the op itself (traced as it is)."""
        if original is not None:
            return original(*args, **kwargs)
        if target in busy:
            return NotImplemented  # the tracer then records the op as it is
        busy.add(target)
        try:
            return target(*args, **kwargs)
        finally:
            busy.discard(target)

    def buggy_for(target, original):
        def buggy(*args, **kwargs):
            if kind == "compile_error":
                raise RuntimeError(f"injected decomposition bug: aten.{op} has no valid decomposition")
            out = right(target, original, args, kwargs)
            if out is NotImplemented:
                return out
            if isinstance(out, (tuple, list)):  # e.g. (output, mean, rstd): only the output is wrong
                return (wrong(out[0]), *out[1:])
            return wrong(out)
        return buggy

    undo_steps = [(table, target, table.get(target)) for table in tables for target in targets]
    for table, target, original in undo_steps:
        table[target] = buggy_for(target, original)

    def undo():
        for table, target, original in reversed(undo_steps):
            if original is None:
                table.pop(target, None)
            else:
                table[target] = original

    return undo


@dataclass(frozen=True)
class DecompositionBug(BugSpec):
    """Inductor's decomposition table holds a wrong entry for aten `op`."""

    op: str
    kind: str = "accuracy"
    form: str | None = None

    target = "decomposition"
    patcher = staticmethod(patch_decomposition)

    def __post_init__(self):
        check_choice("decomposition injection kind", self.kind, KINDS)
        if self.form is not None:
            check_choice("accuracy form", self.form, VALUE_FORMS)

    def patch_args(self) -> dict:
        return {"op": self.op, "kind": self.kind, "form": self.form or "add_one"}

    @staticmethod
    def parse(body: str) -> "DecompositionBug":
        parts = body.split(":")
        if not parts[0] or len(parts) > 3:
            raise ValueError(f"bad decomposition injection {body!r}: expected decomposition:OP[:KIND[:FORM]]")
        return DecompositionBug(parts[0], *(parts[1:] or []))
