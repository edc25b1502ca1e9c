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
    """Replace Inductor's decomposition of aten `op` by a wrong one; returns undo."""
    import torch
    from torch._inductor import decomposition

    aten = torch.ops.aten
    packet_name, _, overload = op.partition(".")
    packet = getattr(aten, packet_name)
    # select_decomp_table() returns one of these two dicts (the second is cached): patch both.
    tables = [decomposition.decompositions, decomposition.fast_random_decomps()]
    names = [overload] if overload else [n for n in packet.overloads()
                                         if any(getattr(packet, n) in t for t in tables)] or ["default"]
    targets = [getattr(packet, n) for n in names]
    busy = set()  # ops whose wrong decomposition is running: trace the op itself inside it

    def wrong(t):
        if not isinstance(t, torch.Tensor):
            return t
        if t.dtype == torch.bool:
            return ~t
        if form == "negate":
            return -t
        if form == "double":
            return t * 2
        if form == "constant":
            return t * 0 + 3
        if form == "truncate":
            return torch.trunc(t)
        return t + 1

    undo_steps = []
    for table in tables:
        for target in targets:
            original = table.get(target)

            def buggy(*args, _target=target, _original=original, **kwargs):
                if kind == "compile_error":
                    raise RuntimeError(f"injected decomposition bug: aten.{op} has no valid decomposition")
                if _original is not None:
                    out = _original(*args, **kwargs)
                elif _target in busy:
                    return NotImplemented  # the tracer then records the op as it is
                else:
                    busy.add(_target)
                    try:
                        out = _target(*args, **kwargs)
                    finally:
                        busy.discard(_target)
                if out is NotImplemented:
                    return out
                if isinstance(out, (tuple, list)):  # e.g. (output, mean, rstd): only the output is wrong
                    return (wrong(out[0]), *out[1:])
                return wrong(out)

            table[target] = buggy
            undo_steps.append((table, target, original))

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
