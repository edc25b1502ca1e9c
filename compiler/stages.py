"""Run a module through one compiler stage with the user's compile settings.

Stages in pipeline order: Dynamo capture alone (`eager`), AOTAutograd (`aot_eager`), AOT
with Inductor's decompositions and partitioner (`aot_eager_decomp_partition`), and the
full backend (`inductor`). The first stage that shows a failure says whose bug it is.
"""
from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field, replace
from typing import Callable, Iterator

import torch

from compiler import aoti_compile

STAGES = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


@dataclass
class CompileSpec:
    """How the user's script called torch.compile, plus the Inductor config it changed."""

    backend: str = "inductor"
    mode: str | None = None
    options: dict | None = None
    dynamic: bool | None = None
    fullgraph: bool = False
    config: dict = field(default_factory=dict)  # inductor config values that differ from defaults
    grad_enabled: bool = True  # grad mode of the call that ran the graph

    def to_dict(self) -> dict:
        return asdict(self)

    @staticmethod
    def from_dict(d: dict) -> "CompileSpec":
        return CompileSpec(**{k: v for k, v in d.items() if k in CompileSpec.__dataclass_fields__})

    def seeded(self) -> "CompileSpec":
        """This spec with Inductor drawing random numbers as eager does: how a graph that draws
        random numbers is judged from one seed (by the worker's recheck and by its repro)."""
        return replace(self, config={**self.config, "fallback_random": True})

    def compile_kwargs(self, stage: str = "inductor") -> dict:
        """Keyword arguments of torch.compile for `stage` (mode/options only reach the last)."""
        kwargs: dict = {"backend": self.backend if stage == "inductor" else stage}
        if self.dynamic is not None:
            kwargs["dynamic"] = self.dynamic
        if stage == "inductor":
            if self.mode:
                kwargs["mode"] = self.mode
            if self.options:
                kwargs["options"] = dict(self.options)
        return kwargs


@dataclass(frozen=True)
class CompileSetup:
    """How one graph is compiled and run, carried whole from the capture's record to every
    question about it: `spec` (the script's torch.compile call and Inductor config), `injections`
    (bugs planted, as compiler.inject.Injection.to_dict(); the repro writer also takes them whole),
    `context` (the modes the graph ran under: compiler.context), `calls_before` (calls of the compiled
    graph before the one judged: a CUDA graphs bug shows at a later call, compiler/cudagraphs.py)."""

    spec: CompileSpec = field(default_factory=CompileSpec)
    injections: tuple = ()
    context: dict = field(default_factory=dict)
    calls_before: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "injections", tuple(self.injections))

    def with_spec(self, **changes) -> "CompileSetup":
        """This setup with the spec's `changes` (dynamic=True, ...)."""
        return replace(self, spec=replace(self.spec, **changes))


def compile_for_stage(model: torch.nn.Module, stage: str, spec: CompileSpec) -> Callable:
    """A callable that runs `model` through `stage` (compiling lazily, at the first call)."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}")
    if stage == "inductor" and spec.backend == aoti_compile.BACKEND:  # exported and compiled ahead of time
        return aoti_compile.compiled(model)
    return torch.compile(model, **spec.compile_kwargs(stage))


@contextlib.contextmanager
def fresh_compile_state(spec: CompileSpec) -> Iterator[None]:
    """Forget earlier compiles and apply the user's Inductor config for one check."""
    torch._dynamo.reset()
    with torch._inductor.config.patch(_known_keys(spec.config)), torch.set_grad_enabled(spec.grad_enabled):
        yield


@contextlib.contextmanager
def kernel_build_threads(threads: int) -> Iterator[None]:
    """Build C++ kernels on `threads` threads (each waits on its own g++) for one compile.
    Only where Triton is not installed: there compile_threads changes nothing but the
    size of Inductor's thread pool; with Triton it would start the subprocess pool that
    compiler.settings keeps off."""
    from torch.utils._triton import has_triton_package

    if threads <= 1 or has_triton_package():
        yield
        return
    with torch._inductor.config.patch(compile_threads=threads):
        yield


def _known_keys(config: dict) -> dict:
    known = torch._inductor.config.get_config_copy()
    return {k: v for k, v in config.items() if k in known}
