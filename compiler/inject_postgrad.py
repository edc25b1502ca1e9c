"""A wrong Inductor graph pass: a post-grad pass that rewrites a functional collective.

The pass runs after Inductor's own post-grad passes (the planted function wraps the
`post_grad_passes` that compile_fx calls), on every graph Inductor compiles, and sets the reduce
op of every `_c10d_functional.OP` (and its in-place form, which Inductor's reinplacing makes of
it) to FORM: `postgrad:all_reduce:max` makes a sum a max. The graph still holds the collective,
so the bug is the collective's own: no one-process graph shows it. aot_eager never runs Inductor's
passes, so only the `inductor` stage shows it. Inductor's config is untouched (the script's own
post_grad_custom_post_pass, if any, still runs, and is still what the capture reports).

Spec string: `postgrad:OP:REDUCE_OP`, e.g. `postgrad:all_reduce:max`.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import BugSpec, check_choice

OPS = ("all_reduce", "reduce_scatter_tensor", "all_reduce_coalesced", "reduce_scatter_tensor_coalesced")
REDUCE_OPS = ("sum", "max", "min", "avg", "product")


def patch_post_grad_collective(op, reduce_op="max"):
    """Plant a post-grad pass setting every functional `op`'s reduce op to `reduce_op`; returns undo."""
    import torch
    import torch._inductor.compile_fx as compile_fx

    packets = [getattr(torch.ops._c10d_functional, n) for n in (op, op + "_") if hasattr(torch.ops._c10d_functional, n)]
    targets = {getattr(p, n) for p in packets for n in p.overloads()}
    original = compile_fx.post_grad_passes

    def wrong_collective_pass(gm, is_inference):
        original(gm, is_inference)
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target in targets:
                node.args = (node.args[0], reduce_op, *node.args[2:])
        gm.recompile()

    compile_fx.post_grad_passes = wrong_collective_pass

    def undo():
        compile_fx.post_grad_passes = original

    return undo


@dataclass(frozen=True)
class PostGradBug(BugSpec):
    """A post-grad pass rewrites functional collective `op`: its reduce op becomes `reduce_op`."""

    op: str
    reduce_op: str = "max"

    target = "postgrad"
    patcher = staticmethod(patch_post_grad_collective)

    def __post_init__(self):
        check_choice("post-grad pass op", self.op, OPS)
        check_choice("reduce op", self.reduce_op, REDUCE_OPS)

    @staticmethod
    def parse(body: str) -> "PostGradBug":
        parts = body.split(":")
        if not parts[0] or len(parts) > 2:
            raise ValueError(f"bad postgrad injection {body!r}: expected postgrad:OP[:REDUCE_OP]")
        return PostGradBug(*parts)
