"""Which of Inductor's kernels a device-side assert came from.

Kernel launches are asynchronous: an assert surfaces at the next synchronization, past other
kernels, and the lines CUDA prints do not name the kernel either (Triton 3.6 prints the helper's
file and `unknown` for the function). While `kernel_waits` is on, each Triton kernel Inductor
launches is waited for before the next: the one whose wait raises the assert is named, and the
kernel map of the same compile (compiler.kernels) gives the graph nodes it computes. The
reduction then cuts the graph right after those nodes in a try or two instead of searching the
op order with one fresh process per asserting try. A worker waits so only once the run has seen
a device assert (one GPU job at a time then anyway): waiting could hide a bug of timing.
"""
from __future__ import annotations

import contextlib
from typing import Iterator

import torch

from compiler.gpu_gate import poisons


def kernel_name(launcher) -> str | None:
    """The name Inductor gave a Triton kernel (as its kernel map lists it)."""
    meta = getattr(launcher, "inductor_meta", None) or {}
    return meta.get("kernel_name") or getattr(getattr(launcher, "fn", None), "__name__", None)


@contextlib.contextmanager
def kernel_waits() -> Iterator[list[str]]:
    """Meanwhile, wait for each Triton kernel after its launch; the list names the kernel whose
    wait raised (a device-side assert, an illegal access), if one did."""
    from torch._inductor.runtime.triton_heuristics import CachingAutotuner

    named: list[str] = []
    original = CachingAutotuner.run

    def run(self, *args, **kwargs):
        try:  # a kernel with several configs is benchmarked at its first launch: it may assert there
            result = original(self, *args, **kwargs)
            torch.cuda.synchronize()
        except Exception as exc:
            if not named and poisons(f"{type(exc).__name__}: {exc}"):
                named.append(kernel_name(self) or "")
            raise
        return result

    CachingAutotuner.run = run
    try:
        yield named
    finally:
        CachingAutotuner.run = original

