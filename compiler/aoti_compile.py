"""A graph compiled the way a deployment script compiles it: exported (torch.export), compiled
ahead of time (torch._inductor.aoti_compile_and_package) and its package loaded and called.

The backend name `aoti` in a CompileSpec asks for this instead of torch.compile
(compiler.stages.compile_for_stage): how an AOTInductor failure that does not show under
torch.compile is reduced, each candidate a package of its own (a C++ library: seconds each).
"""
from __future__ import annotations

import os
import tempfile
from typing import Callable

import torch
import torch._inductor

BACKEND = "aoti"


class Exported(torch.nn.Module):
    """`f` as a module, so that torch.export can export it (its inputs all user inputs)."""

    def __init__(self, f: Callable):
        super().__init__()
        self.f = f

    def forward(self, *args):
        return self.f(*args)


def compiled(model: Callable) -> Callable:
    """A callable that, at its first call, exports `model` on the call's inputs, compiles it
    with aoti_compile_and_package, loads the package, and from then on runs the package."""
    package = None

    def run(*args):
        nonlocal package
        if package is None:
            ep = torch.export.export(Exported(model), tuple(args))
            with tempfile.TemporaryDirectory(prefix="minify-aoti-") as folder:  # the package is loaded from it
                path = torch._inductor.aoti_compile_and_package(ep, package_path=os.path.join(folder, "graph.pt2"))
                package = torch._inductor.aoti_load_package(path)
        return package(*args)
    return run
