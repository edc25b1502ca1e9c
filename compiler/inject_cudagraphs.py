"""A wrong CUDA graphs replay: cudagraph trees replay a recorded graph without copying the call's
new inputs into the graph's static input buffers, so every replay computes on the inputs the
graph was recorded with. The first call (a warm-up, no CUDA graph) and the second (the
recording) are right; the third and later calls return stale values wherever their inputs
differ. No compile without CUDA graphs shows it (compiler/cudagraphs.py).

Spec string: `cudagraphs:stale_inputs`.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import BugSpec, check_choice

FORMS = ("stale_inputs",)


def patch_cudagraph_replay(form="stale_inputs"):
    """Plant a replay that skips copying the new inputs (cudagraph trees' CUDAGraphNode); returns undo."""
    from torch._inductor import cudagraph_trees

    node = cudagraph_trees.CUDAGraphNode
    original = node._copy_inputs_and_remove_from_src

    def stale_inputs(self, dsts, srcs):
        for idx in self.non_static_input_idx:
            srcs[idx] = None  # dropped as the real copy drops them, but never copied

    node._copy_inputs_and_remove_from_src = stale_inputs

    def undo():
        node._copy_inputs_and_remove_from_src = original

    return undo


@dataclass(frozen=True)
class CudagraphsBug(BugSpec):
    """cudagraph trees replay a recorded graph on stale inputs (`form`: what goes wrong)."""

    form: str = "stale_inputs"

    target = "cudagraphs"
    patcher = staticmethod(patch_cudagraph_replay)

    def __post_init__(self):
        check_choice("cudagraphs form", self.form, FORMS)

    @staticmethod
    def parse(body: str) -> "CudagraphsBug":
        if ":" in body:
            raise ValueError(f"bad cudagraphs injection {body!r}: expected cudagraphs[:FORM]")
        return CudagraphsBug(body or "stale_inputs")
