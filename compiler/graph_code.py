"""FX graphs as standalone Python source, and back.

A candidate travels to a worker as the very source that repro.py will contain, so every
candidate is checked through the same entry point as the final repro (an nn.Module whose
forward is the graph), and its hash is a stable cache key.
"""
from __future__ import annotations

import builtins
import contextlib
import math
import operator
import re
import threading
from pathlib import Path

import torch
import torch.fx as fx
import torch.utils._pytree as pytree
from torch._ops import OpOverload
from torch.fx.graph import CodeGen, magic_methods
from torch.fx.graph_module import _format_import_block
from torch.package import sys_importer

from compiler.custom_ops import definitions, remember_blocks
from compiler.program_files import load_program
from compiler.user_kernels import kernel_block, named_launches

CLASS_NAME = "Repro"
_FREE_STATEMENT = re.compile(r";  (?:\w+ = )+None$")


def forward_source(gm: fx.GraphModule) -> tuple[str, str]:
    """(import block, `def forward(self, ...)` source) for a graph without attributes."""
    for node in gm.graph.nodes:
        node.type = None  # annotations add nothing to a repro and may not be importable
    with printable_constants(gm.graph.nodes):  # whatever the graph's own codegen writes
        code = gm.graph.python_code(root_module="self")
    imports = _format_import_block(code.globals, sys_importer)
    lines = [_FREE_STATEMENT.sub("", line.rstrip()) for line in code.src.strip("\n").splitlines()]
    return imports.strip(), named_launches("\n".join(line for line in lines if line.strip()))


def carried_definitions(gm: fx.GraphModule) -> str:
    """What a standalone source of `gm` must define ahead of it ("" when nothing): the custom ops
    (compiler/custom_ops.py) and user Triton kernels (compiler/user_kernels.py) it calls."""
    return "\n\n".join(block for block in (definitions(gm), kernel_block(gm)) if block)


def float_literal(x: float) -> str:
    """Python source that evaluates to exactly the float `x` (NaN's sign and payload aside)."""
    if math.isnan(x):
        return "float('nan')"
    if math.isinf(x):
        return "float('inf')" if x > 0 else "-float('inf')"
    return repr(x)  # shortest round-trip repr; keeps -0.0


def complex_literal(z: complex) -> str:
    """`complex(re, im)` with exact parts: repr(complex) writes `(inf+nanj)` (a NameError) and
    `(-0+1j)` (which loses the sign of the zero)."""
    return f"complex({float_literal(z.real)}, {float_literal(z.imag)})"


class _Literal:
    """A constant as FX must write it: FX writes repr() of constants it has no rule for."""
    __slots__ = ("text",)

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


_PLAIN = (bool, int, float, complex, str, type(None))
_ATOMIC = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _constant_text(value) -> str | None:
    """Source for a plain constant, as FX would write it once fixed; None when not plain."""
    if isinstance(value, _Literal):
        return value.text
    if isinstance(value, complex):
        # `(1+2j)` and `2j` evaluate back exactly; with a sign (`-1j` is complex(-0.0, -1.0)) or a
        # non-finite part they do not
        parts = (value.real, value.imag)
        exact = all(math.isfinite(p) and math.copysign(1.0, p) > 0 for p in parts)
        return repr(value) if exact else complex_literal(value)
    if isinstance(value, _PLAIN):
        return repr(value)  # FX writes inf, nan, -inf as names it imports from math
    return None


def _fixed(value):
    """`value` (an argument, possibly nested) with constants FX misprints replaced by _Literal."""
    if isinstance(value, fx.Node):
        return value
    if isinstance(value, list):
        return [_fixed(v) for v in value]
    if isinstance(value, tuple) and not hasattr(value, "_fields"):
        return tuple(_fixed(v) for v in value)
    if isinstance(value, complex):
        text = _constant_text(value)
        return value if text == repr(value) else _Literal(text)
    return value


def _parenthesized(value, when) -> object:
    if isinstance(value, _Literal):  # already printable
        return value
    text = None if isinstance(value, fx.Node) else _constant_text(value)
    return _Literal(f"({text})") if text is not None and when(text) else value


def printable_args(node: fx.Node) -> tuple[tuple, dict] | None:
    """(args, kwargs) of `node` with every constant that FX would write as source that does not
    parse or that means something else, as the source that does; None when FX's is right.

    FX writes a constant as its repr, pasted into a template: a method called on a folded
    constant became `1.abs()` (does not parse), `-2 ** x` means -(2 ** x), `getattr(1, 'real')`
    became `1.real`, and complex constants `(inf+nanj)`. Parentheses and exact literals fix these."""
    args = tuple(_fixed(a) for a in node.args)
    kwargs = {k: _fixed(v) for k, v in node.kwargs.items()}
    method_like = node.op == "call_method" or (node.op == "call_function" and node.target is builtins.getattr)
    if method_like and args:  # `(1).abs()`: an attribute of anything but a name needs parentheses
        args = (_parenthesized(args[0], lambda text: not _ATOMIC.fullmatch(text)), *args[1:])
    elif (node.op == "call_function" and getattr(node.target, "__module__", "") == "_operator"
          and getattr(node.target, "__name__", "") in magic_methods):
        # operators are written as `{} ** {}`: a signed operand needs parentheses
        args = tuple(_parenthesized(a, lambda text: text.startswith(("-", "+", "~"))) for a in args)
    changed = any(a is not b for a, b in zip(args, node.args)) or \
        any(kwargs[k] is not v for k, v in node.kwargs.items()) or \
        any(isinstance(a, (list, tuple)) and a != b for a, b in zip(args, node.args))
    return (args, kwargs) if changed else None


@contextlib.contextmanager
def printable_constants(nodes):
    """While inside, the args of `nodes` hold their constants as printable_args writes them."""
    saved = []
    try:
        for node in nodes:
            printable = printable_args(node)
            if printable is not None:
                saved.append((node, node.args, node.kwargs))
                node.args, node.kwargs = printable
        yield
    finally:
        for node, node_args, node_kwargs in reversed(saved):
            node.args, node.kwargs = node_args, node_kwargs


class PrintableCodeGen(CodeGen):
    """FX's code generation, with constants written as source that parses and means the same
    (printable_args). Set on the graphs minify builds (`printable`), so their GraphModules can
    be built at all (`1.abs()` raised SyntaxError in GraphModule's own recompile) and compute
    what the graph says (`-2 ** x`). FX itself is left as it is: the compiler under test
    (Dynamo's graphs, the workers' compiles, repro.py) runs unmodified."""

    def _gen_python_code(self, nodes, *args, **kwargs):
        with printable_constants(nodes):
            return super()._gen_python_code(nodes, *args, **kwargs)


def printable(graph: fx.Graph) -> fx.Graph:
    """`graph`, generating its code with PrintableCodeGen (unless it has a codegen of its own)."""
    if type(graph._codegen) is CodeGen:
        graph.set_codegen(PrintableCodeGen())
    return graph


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
    defined = carried_definitions(gm)  # its custom ops and kernels, registered where it loads
    imports += f"\n\n\n{defined}" if defined else ""
    return f"{imports}\n\n\nclass {CLASS_NAME}(torch.nn.Module):\n" + "\n".join(body) + "\n"


def module_from_source(source: str, folder: Path | None = None) -> torch.nn.Module:
    """Instantiate the Repro module that `source` defines, run as a file of `folder` (the run's
    programs folder by default: compiler.program_files), so tracebacks show its lines."""
    if "torch.ops.prims." in source:  # Inductor's own prims (fma, ...) exist once its module is imported
        import torch._inductor.inductor_prims  # noqa: F401
    remember_blocks(source)  # the custom ops it defines, for the candidates made from it
    return getattr(load_program(source, "graph", folder), CLASS_NAME)()


# Dynamo writes a torch.func transform (grad, vmap, jvp, jacfwd, jacrev) as calls that open
# and close its levels around the ops (`_vmap_increment_nesting`, `_add_batch_dim`, `_wrap_for_grad`,
# ... in these modules): they take and return tensors of a level that exists only between them.
TRANSFORM_MODULES = ("torch._functorch", "torch._C._functorch")
# A backward traced by compiled autograd calls that engine's own ops (validate_outputs, ...).
COMPILED_AUTOGRAD = "torch._dynamo.compiled_autograd"


def unreplayable_form(gm: fx.GraphModule) -> str | None:
    """Why `gm` cannot be written and replayed as a graph of its own, in words that follow
    "could not be replayed: "; None when it can. The program is reduced instead."""
    transforms = sorted({getattr(n.target, "__name__", str(n.target)) for n in gm.graph.nodes if n.op == "call_function"
                         and str(getattr(n.target, "__module__", "")).startswith(TRANSFORM_MODULES)})
    if transforms:
        return (f"it runs inside torch.func transforms (grad, vmap, jacfwd, jacrev, functional forward AD: "
                f"{', '.join(transforms[:4])}{', ...' if len(transforms) > 4 else ''}), whose level bookkeeping "
                f"does not run as a graph of its own")
    autograd_ops = sorted({n.target.__name__ for n in gm.graph.nodes if n.op == "call_function"
                           and str(getattr(n.target, "__module__", "")).startswith(COMPILED_AUTOGRAD)})
    if autograd_ops:
        return (f"it is a compiled autograd backward graph (it calls {', '.join(autograd_ops[:3])}, compiled "
                f"autograd's own ops, and takes the engine's inputs list), which minify cannot write as a graph "
                f"of its own yet")
    subgraphs = [n for n in gm.graph.find_nodes(op="get_attr")
                 if isinstance(_get_attr(gm, n.target), torch.nn.Module)]
    if subgraphs:
        callers = sorted({str(getattr(u.target, "__name__", u.target)) for n in subgraphs for u in n.users})
        return (f"it passes subgraphs ({', '.join(str(n.target) for n in subgraphs[:4])}) to "
                f"{', '.join(callers)} (an autograd.Function, a tensor hook, torch.cond, a checkpoint), "
                f"which minify cannot write as a graph of its own yet")
    return None


def check_round_trip(source: str) -> None:
    """Raise ValueError unless `source` (module_source's) loads and traces back into a graph, as
    every later stage loads it: found here, in the capture, the graph is marked unreplayable
    and the program reduced instead; found later, it was an internal error."""
    try:
        trace_module(module_from_source(source))
    except Exception as exc:
        raise ValueError(f"its code, written out, does not load back as a graph ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0] if str(exc) else ''})") from exc


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
    return fx.GraphModule(torch.nn.Module(), printable(graph)), list(inputs) + lifted


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


# FX tracing patches torch (its factories, OpOverload.__call__, nn.Module.__call__) for the whole
# process while it runs. Traces take this lock, and so does in-process torch work on another
# thread (writing a repro while the search goes on), or a torch.load there builds proxies.
TRACING = threading.RLock()


class _FactoryTracer(fx.Tracer):
    """Also keeps aten ops called on constants alone as calls: AOTAutograd's graphs build
    constants that way (`torch.ops.aten.full.default([], 0.0, ...)` in a relu backward); and
    traces item assignment (`x[:, 2:5] = 2`, how Dynamo writes an in-place write into an input,
    which FX's Proxy refuses) as the `operator.setitem` node Dynamo's graph had."""

    def trace(self, root, concrete_args=None):
        with TRACING:
            return self._trace(root, concrete_args)

    def _trace(self, root, concrete_args=None):
        originals = {name: getattr(torch, name) for name in FACTORIES if hasattr(torch, name)}
        here = threading.get_ident()  # the patches are process-wide: only this thread's calls are traced

        def as_call(fn):
            return lambda *args, **kwargs: self.create_proxy("call_function", fn, args, kwargs) \
                if threading.get_ident() == here else fn(*args, **kwargs)

        op_call = OpOverload.__call__

        def call_op(op, *args, **kwargs):
            if threading.get_ident() != here or any(isinstance(a, fx.Proxy)
                                                    for a in pytree.tree_leaves((args, kwargs))):
                return op_call(op, *args, **kwargs)
            return self.create_proxy("call_function", op, args, kwargs)

        def set_item(proxy, key, value):
            proxy.tracer.create_proxy("call_function", operator.setitem, (proxy, key, value), {})

        for name, fn in originals.items():
            setattr(torch, name, as_call(fn))
        OpOverload.__call__ = call_op
        had_set_item = fx.Proxy.__dict__.get("__setitem__")  # a trace inside a trace keeps the outer's
        fx.Proxy.__setitem__ = set_item  # only proxies call it, and they exist only while tracing
        try:
            return super().trace(root, concrete_args)
        finally:
            if had_set_item is None:
                del fx.Proxy.__setitem__
            else:
                fx.Proxy.__setitem__ = had_set_item
            OpOverload.__call__ = op_call
            for name, fn in originals.items():
                setattr(torch, name, fn)


def trace_module(module: torch.nn.Module) -> fx.GraphModule:
    """fx.symbolic_trace, except that tensor factories stay calls (see FACTORIES)."""
    graph = _FactoryTracer().trace(module)
    return fx.GraphModule(module, printable(graph))


def placeholders(gm: fx.GraphModule) -> list[fx.Node]:
    return list(gm.graph.find_nodes(op="placeholder"))
