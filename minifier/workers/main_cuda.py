"""This process's own CUDA, started while the capture still runs.

The main process runs the failing graph once (its recorded values) and loads its inputs with
torch.load; on a GPU that started CUDA right after the capture ended, beside the workers
replaced after a device-side assert that start theirs at the same moment: loading a small
graph then took several times what it takes once CUDA is up. The capture takes seconds
longer than this process's `import torch`, so CUDA (and cuBLAS) start in that wait.
"""
from __future__ import annotations

import contextlib
import threading


def start_cuda_aside() -> threading.Thread:
    """Start CUDA and cuBLAS on a daemon thread; torch's lazy init makes any later CUDA call
    wait for it rather than start it twice."""
    thread = threading.Thread(target=_start_cuda, daemon=True, name="main-cuda")
    thread.start()
    return thread


def start_cuda() -> None:
    """Start CUDA and cuBLAS (a worker's warm-up does too: what its first check would wait for)."""
    import torch

    from compiler import gpu_gate

    with gpu_gate.starting_cuda():  # never beside a device assert or its teardown
        ones = torch.ones(8, 8, device="cuda")
        (ones @ ones).sum().item()


def _start_cuda() -> None:
    with contextlib.suppress(Exception):  # a GPU that cannot start fails where it is used, as before
        start_cuda()
