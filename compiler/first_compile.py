"""A process's first compile for one device, paid before it is needed (a process started
ahead of its work: CUDA started, Triton or C++ built, Inductor's lazy imports done)."""
from __future__ import annotations


def first_compile(device: str) -> None:
    """Compile and run a throwaway function on `device`, with the whole-graph caches off as every
    process of the tool has them; Dynamo forgets it after."""
    import torch
    import torch._dynamo
    import torch._inductor.config as inductor_config

    if device != "cpu":
        torch.ones(1, device=device).add_(1)
    with inductor_config.patch(fx_graph_cache=False):
        torch.compile(lambda x: x * 2 + 1)(torch.ones(4, device=device))
    torch._dynamo.reset()
