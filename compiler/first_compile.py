"""A process's first compile for one device, paid before it is needed (a process started
ahead of its work: CUDA started, Triton or C++ built, Inductor's lazy imports done)."""
from __future__ import annotations


def first_compile(device: str, config: dict | None = None) -> None:
    """Compile and run a throwaway function on `device` under Inductor `config`, with the settings
    of every process of the tool (compiler/settings.py: whole-graph caches off, no pool of compile
    subprocesses, which would each import torch beside the capture); Dynamo forgets it after.

    A first C++ compile in an Inductor cache also builds the precompiled header for its command
    line (seconds of g++), which every later C++ compile with that line reuses."""
    import torch
    import torch._dynamo
    import torch._inductor.config

    from compiler import settings

    from compiler import gpu_gate

    settings.apply()
    with gpu_gate.starting_cuda():  # a CPU compile may start CUDA too (seen on the H100)
        if device != "cpu":
            torch.ones(1, device=device).add_(1)
        with torch._inductor.config.patch(config or {}):
            torch.compile(lambda x: x * 2 + 1)(torch.ones(4, device=device))
    torch._dynamo.reset()
