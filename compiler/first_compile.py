"""A process's first compile for one device, paid before it is needed (a process started
ahead of its work: CUDA started, Triton or C++ built, Inductor's lazy imports done)."""
from __future__ import annotations


def first_compile(device: str) -> None:
    """Compile and run a throwaway function on `device`, with the settings of every process of the
    tool (compiler/settings.py: whole-graph caches off, no pool of compile subprocesses, which
    would each import torch beside the capture); Dynamo forgets it after."""
    import torch
    import torch._dynamo

    from compiler import settings

    settings.apply()
    if device != "cpu":
        torch.ones(1, device=device).add_(1)
    torch.compile(lambda x: x * 2 + 1)(torch.ones(4, device=device))
    torch._dynamo.reset()
