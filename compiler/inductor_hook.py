"""Inductor with a hook around every AOT graph it compiles, and other small adapters.

Under the Inductor backend AOTAutograd turns one Dynamo graph into a forward (or inference)
graph and, at the first backward call, a backward graph, and compiles each through
`compile_fx_inner`. The backward graph is compiled code the script runs like any other, so
the capture must see it: `HookedInductor.compile` runs the user's Inductor settings with
`hook(gm, example_inputs, is_backward, compile)` in place of `compile_fx_inner`. A hook may
record the graph, wrap what `compile()` returns, or skip compiling and run the graph eagerly.
"""
from __future__ import annotations

import copy
from typing import Callable

import torch
import torch.fx as fx

# hook(aten graph, example inputs, is_backward, compile) -> what AOTAutograd will call (boxed)
AotHook = Callable[[fx.GraphModule, list, bool, Callable[[], object]], object]


class HookedInductor(torch._TorchCompileInductorWrapper):
    """The backend torch.compile(backend="inductor", mode=..., options=...) builds, plus a hook."""

    def compile(self, gm: fx.GraphModule, example_inputs, hook: AotHook):
        from torch._inductor.compile_fx import compile_fx, compile_fx_inner

        def inner(aten_gm, inputs, **kwargs):
            return hook(aten_gm, inputs, bool(kwargs.get("is_backward")),
                        lambda: compile_fx_inner(aten_gm, inputs, **kwargs))

        kwargs = {}
        if getattr(self, "name", None) is not None:  # torch >= 2.13 names compiled regions
            kwargs["compile_region_name"] = self.name
        return compile_fx(gm, example_inputs, inner_compile=inner, config_patches=dict(self.config), **kwargs)


def disable_aot_cache() -> None:
    """A cache hit in AOTAutograd skips the compilers, and with them the hook: turn it off."""
    import torch._functorch.config as functorch_config

    functorch_config.enable_autograd_cache = False


def copy_graph(gm: fx.GraphModule) -> fx.GraphModule:
    """A copy to run eagerly: Inductor rewrites the graph it compiles in place."""
    return fx.GraphModule(gm, copy.deepcopy(gm.graph))


def boxed(fn: Callable) -> Callable:
    """AOTAutograd calls compiled graphs with one list of arguments, which the callee clears."""
    def call(args: list):
        values = list(args)
        args.clear()
        return fn(*values)

    call._boxed_call = True
    return call


def wrap_compiled(compiled, positional: Callable[[Callable], Callable]):
    """Put `positional(run)` in front of an Inductor result, where `run(*args)` calls it.

    Inductor's result stays the object AOTAutograd gets (only its callable is swapped), so
    whatever else AOTAutograd reads from it is unchanged."""
    original = getattr(compiled, "current_callable", None)
    if original is None:
        return boxed(positional(lambda *args: compiled(list(args))))
    compiled.current_callable = boxed(positional(lambda *args: original(list(args))))
    return compiled


def eager_module(model: torch.nn.Module) -> torch.nn.Module:
    """What torch.compile returns for a module, running it eagerly with Dynamo off: a script
    sees the same wrapper type (state_dict keys, attribute access) with or without compiling."""
    from torch._dynamo.eval_frame import DisableContext, OptimizedModule

    return OptimizedModule(model, DisableContext())
