"""A wrong CUDA graphs input copy: cudagraph trees never copy a call's inputs into the graph's
static input buffers (the copy made when a graph is recorded and at every replay), so a
recorded graph computes on whatever those buffers hold: stale or never written values. The
first call (a warm-up, no CUDA graph) is right; from the second on (the recording, then the
replays) the outputs are wrong wherever the inputs matter. On the device (torch 2.11) every
call after the warm-up recorded afresh and was wrong. No compile without CUDA graphs shows it
(compiler/cudagraphs.py).

Spec string: `cudagraphs:stale_inputs`.
"""
from __future__ import annotations

from dataclasses import dataclass

from compiler.inject_spec import BugSpec, check_choice

FORMS = ("stale_inputs",)


def patch_cudagraph_replay(form="stale_inputs"):
    """Plant an input copy that copies nothing (cudagraph trees' CUDAGraphNode); returns undo."""
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
    """cudagraph trees run a recorded graph on stale inputs (`form`: what goes wrong)."""

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
