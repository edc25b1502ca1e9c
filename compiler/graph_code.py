"""FX graphs as standalone Python source, and back.

A candidate travels to a worker as the very source that repro.py will contain, so every
candidate is checked through the same entry point as the final repro (an nn.Module whose
forward is the graph), and its hash is a stable cache key.
"""
from __future__ import annotations

import hashlib
import linecache
import re

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch._ops import OpOverload
from torch.fx.graph_module import _format_import_block
from torch.package import sys_importer

CLASS_NAME = "Repro"
_FREE_STATEMENT = re.compile(r";  (?:\w+ = )+None$")


def forward_source(gm: fx.GraphModule) -> tuple[str, str]:
    """(import block, `def forward(self, ...)` source) for a graph without attributes."""
    for node in gm.graph.nodes:
        node.type = None  # annotations add nothing to a repro and may not be importable
    code = gm.graph.python_code(root_module="self")
    imports = _format_import_block(code.globals, sys_importer)
    lines = [_FREE_STATEMENT.sub("", line.rstrip()) for line in code.src.strip("\n").splitlines()]
    return imports.strip(), "\n".join(line for line in lines if line.strip())


def module_source(gm: fx.GraphModule, comments: dict[str, str] | None = None) -> str:
    """Standalone source of `class Repro(torch.nn.Module)` computing `gm`."""
    if any(n.op in ("get_attr", "call_module") for n in gm.graph.nodes):
        raise ValueError("graph still reads module attributes; lift them to inputs first")
    imports, forward = forward_source(gm)
    body = []
    for line in forward.splitlines():
        name = line.strip().split(" = ", 1)[0]
        if comments and name in comments:
            body.append(f"        # {comments[name]}")
        body.append("    " + line)
    return f"{imports}\n\n\nclass {CLASS_NAME}(torch.nn.Module):\n" + "\n".join(body) + "\n"


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def module_from_source(source: str) -> torch.nn.Module:
    """Instantiate the Repro module that `source` defines (tracebacks show its lines)."""
    filename = f"<minify-candidate-{source_hash(source)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict = {"__name__": "minify_candidate"}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[CLASS_NAME]()


def lift_attributes(gm: fx.GraphModule, inputs: list) -> tuple[fx.GraphModule, list]:
    """Turn get_attr nodes (constants, buffers) into trailing placeholders fed with their values."""
    graph = fx.Graph()
    env: dict[fx.Node, fx.Node] = {}
    lifted: list = []
    for node in gm.graph.find_nodes(op="placeholder"):
        env[node] = graph.node_copy(node, lambda n: env[n])
    for node in gm.graph.find_nodes(op="get_attr"):
        value = _get_attr(gm, node.target)
        if not isinstance(value, torch.Tensor):
            raise ValueError(f"graph reads a non-tensor attribute {node.target!r}")
        env[node] = graph.placeholder(re.sub(r"\W", "_", str(node.target)))
        env[node].meta = dict(node.meta)
        lifted.append(value.detach())
    for node in gm.graph.nodes:
        if node.op == "call_module":
            raise ValueError(f"graph calls submodule {node.target!r}, which minify cannot replay yet")
        if node not in env:
            env[node] = graph.node_copy(node, lambda n: env[n])
    return fx.GraphModule(torch.nn.Module(), graph), list(inputs) + lifted


def _get_attr(module: torch.nn.Module, target: str):
    value = module
    for part in target.split("."):
        value = getattr(value, part)
    return value


# torch functions that build a tensor from plain Python values. fx.symbolic_trace would run them
# (no proxy among their arguments) and freeze the result as a `_tensor_constant` attribute,
# which a repro cannot carry; traced as calls they stay `torch.arange(12)` in the graph.
FACTORIES = ("arange", "ones", "zeros", "full", "empty", "eye", "linspace", "logspace", "tensor",
             "scalar_tensor", "rand", "randn", "randint", "randperm", "empty_strided", "zeros_like",
             "ones_like", "full_like", "empty_like", "rand_like", "randn_like")


class _FactoryTracer(fx.Tracer):
    """Also keeps aten ops called on constants alone as calls: AOTAutograd's graphs build
    constants that way (`torch.ops.aten.full.default([], 0.0, ...)` in a relu backward)."""

    def trace(self, root, concrete_args=None):
        originals = {name: getattr(torch, name) for name in FACTORIES if hasattr(torch, name)}

        def as_call(fn):
            return lambda *args, **kwargs: self.create_proxy("call_function", fn, args, kwargs)

        op_call = OpOverload.__call__

        def call_op(op, *args, **kwargs):
            if any(isinstance(a, fx.Proxy) for a in pytree.tree_leaves((args, kwargs))):
                return op_call(op, *args, **kwargs)
            return self.create_proxy("call_function", op, args, kwargs)

        for name, fn in originals.items():
            setattr(torch, name, as_call(fn))
        OpOverload.__call__ = call_op
        try:
            return super().trace(root, concrete_args)
        finally:
            OpOverload.__call__ = op_call
            for name, fn in originals.items():
                setattr(torch, name, fn)


def trace_module(module: torch.nn.Module) -> fx.GraphModule:
    """fx.symbolic_trace, except that tensor factories stay calls (see FACTORIES)."""
    graph = _FactoryTracer().trace(module)
    return fx.GraphModule(module, graph)


def placeholders(gm: fx.GraphModule) -> list[fx.Node]:
    return list(gm.graph.find_nodes(op="placeholder"))
