"""Compiler settings every process of the tool runs with (capture, workers, repro checks).

Whole-graph caches off: they key on the graph and config, not on patched codegen, so a planted
bug would be hidden by an earlier clean compile; and a warm cache changes what a failing
compile raises (torch 2.13: a C++ compile error becomes "AttributeError: 'CompiledFxGraph'
object has no attribute 'source_code'" the second time the same graph is compiled), so one
bug would carry two signatures. Kernel-level caches stay on: they key on the kernel source.

Kernels compiled in-process (compile_threads=1): after one kernel fails to compile, Inductor's
subprocess compile pool can fail every later compile in that process with a bare
SubprocException, which would turn the next candidates' answers into a different "bug".
"""
from __future__ import annotations

import importlib
import os

# (module, attribute) -> value
VALUES = {
    ("torch._inductor.config", "fx_graph_cache"): False,
    ("torch._inductor.config", "fx_graph_remote_cache"): False,
    ("torch._inductor.config", "compile_threads"): 1,
    ("torch._functorch.config", "enable_autograd_cache"): False,
}


# The environment the tool's processes start with. minify runs several torch processes at once
# (the capture beside the zygote's warm-up, two or more workers, verification beside blame), each
# with an OpenMP thread per core; by default a thread that waits at a barrier spins for a while
# before it sleeps, so a process between two parallel ops keeps the cores the others need
# (on 2 cores a short check beside another worker's compile ran several times slower than with
# passive waiting). Passive threads sleep at once. No value changes: only how idle
# threads wait. Read by OpenMP when torch loads, so set before any of them starts.
ENVIRONMENT = {"OMP_WAIT_POLICY": "PASSIVE"}


# Environment variables torch reads as a "force": each would beat its value in VALUES, whatever
# `apply` sets (TORCHINDUCTOR_FX_GRAPH_CACHE=1 in the user's shell would let a clean compile be
# served to a planted one; =0 would keep compiler.shared_compile from storing a try's compile).
OVERRIDES = ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE")


def drop_overrides() -> None:
    """Unset OVERRIDES in this process's environment, before torch loads here or in any process
    it starts: VALUES then hold in each of them as `apply` sets them."""
    for name in OVERRIDES:
        os.environ.pop(name, None)


def share_cores() -> None:
    """Set ENVIRONMENT in this process's environment, for itself and every process it starts;
    a value the user set stays."""
    for name, value in ENVIRONMENT.items():
        os.environ.setdefault(name, value)


def apply() -> None:
    """Set VALUES in this process."""
    for (module, name), value in VALUES.items():
        setattr(importlib.import_module(module), name, value)

