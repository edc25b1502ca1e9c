"""Inductor's generated code for a graph, and which graph nodes each kernel computes.

The seeds' manual workflow ends by reading output_code.py to find the kernel that holds a
miscompiled op. Here that is automatic: while Inductor generates code, every kernel it
names passes through its provenance hook (`set_kernel_post_grad_provenance_tracing`) with
the FX nodes it was made from; each such node's `from_node` chain leads back to the node of
the graph Inductor was given (here: the replayed graph, whose node names are ours). Code is
generated without compiling or running it, so a graph whose kernels crash or fail to build
still shows its code.
"""
from __future__ import annotations

import contextlib
import importlib
import re
from dataclasses import asdict, dataclass, field
from typing import Iterator

import torch

from compiler.stages import CompileSpec, compile_for_stage

_HOOK_MODULES = ("torch._inductor.debug", "torch._inductor.codegen.cpp", "torch._inductor.codegen.triton")
_HOOK = "set_kernel_post_grad_provenance_tracing"


@dataclass
class Kernel:
    name: str  # as in the generated code: cpp_fused_neg_0, triton_poi_fused_add_0, extern_kernels.mm
    kind: str  # cpp | triton | extern
    nodes: list[str] = field(default_factory=list)  # nodes of the compiled graph it computes
    aten: list[str] = field(default_factory=list)  # post-grad ATen nodes it computes
    source: str = ""  # its code; for an extern kernel, the line that calls it

    @property
    def in_place(self) -> bool:
        """Writes its result over one of its inputs: that input's value never outlives it."""
        return "in_out_ptr" in self.source

    def to_dict(self) -> dict:
        return asdict(self)


@contextlib.contextmanager
def kernel_origins() -> Iterator[list[tuple[str, list]]]:
    """Collect (kernel name, origin FX nodes) for every kernel Inductor names meanwhile."""
    seen: list[tuple[str, list]] = []
    patched = []
    for name in _HOOK_MODULES:
        try:
            module = importlib.import_module(name)
        except Exception:  # e.g. a codegen backend that cannot be imported here
            continue
        original = getattr(module, _HOOK, None)
        if original is None:
            continue

        def hook(node_schedule, kernel_name, is_extern=False, *, _original=original):
            with contextlib.suppress(Exception):  # what is recorded must never fail the compile
                seen.append((kernel_name, _origin_nodes(node_schedule, is_extern)))
            return _original(node_schedule, kernel_name, is_extern)

        setattr(module, _HOOK, hook)
        patched.append((module, original))
    try:
        yield seen
    finally:
        for module, original in patched:
            setattr(module, _HOOK, original)


def _origin_nodes(node_schedule, is_extern: bool) -> list:
    if is_extern:  # its origins also hold whatever produced its inputs; origin_node is what it computes
        origin = getattr(node_schedule, "origin_node", None)
        return [origin] if origin is not None else list(getattr(node_schedule, "origins", ()))
    nodes = []
    for snode in node_schedule:
        ir_node = getattr(snode, "node", None)
        nodes.extend(getattr(ir_node, "origins", ()) if ir_node is not None else ())
    return nodes


def source_node(fx_node) -> str:
    """Name of the node of the graph given to torch.compile that `fx_node` was made from."""
    chain = fx_node.meta.get("from_node") or []
    while chain and getattr(chain[0], "from_node", None):
        chain = chain[0].from_node
    return chain[0].name if chain else fx_node.name


@contextlib.contextmanager
def recorded_kernels() -> Iterator[list[Kernel]]:
    """Inductor's kernels, with the nodes each computes, of what is compiled (built and run as
    usual) meanwhile: the kernel map of a check, at no extra compile. Filled on exit."""
    from torch._inductor.graph import GraphLowering

    codes: list[str] = []
    original = GraphLowering.compile_to_module

    def compile_to_module(self):
        module = original(self)
        path = getattr(module, "__file__", None)
        if path:
            with contextlib.suppress(OSError):
                with open(path) as f:
                    codes.append(f.read())
        return module

    found: list[Kernel] = []
    GraphLowering.compile_to_module = compile_to_module
    try:
        with kernel_origins() as seen:
            yield found
    finally:
        GraphLowering.compile_to_module = original
        if codes:  # the script's own compile records them too: a parse that fails leaves none
            with contextlib.suppress(Exception):
                found.extend(parse_kernels(codes, seen))


@contextlib.contextmanager
def _codegen_only() -> Iterator[list[str]]:
    """Generate Inductor's output code but neither build nor run it (as inductor.utils.get_code)."""
    from torch._inductor.graph import GraphLowering

    codes: list[str] = []

    class NothingToRun:
        def call(self, *args, **kwargs):
            return None

    def compile_to_module(self):
        wrapper, kernel = self.codegen_with_cpp_wrapper() if self.cpp_wrapper else self.codegen()
        codes.append(wrapper.value)
        if kernel:
            codes.append(kernel.value)
        return NothingToRun()

    original = GraphLowering.compile_to_module
    GraphLowering.compile_to_module = compile_to_module
    try:
        yield codes
    finally:
        GraphLowering.compile_to_module = original


def generated_code(model: torch.nn.Module, inputs: list, spec: CompileSpec) -> tuple[list[str], list[Kernel]]:
    """Inductor's output code for `model` on `inputs` (under the caller's config and grad
    mode) and its kernels, each with the nodes of `model`'s graph it computes."""
    with kernel_origins() as seen, _codegen_only() as codes:
        try:
            compile_for_stage(model, "inductor", spec)(*inputs)
        except Exception:
            if not codes:  # the nothing-to-run stand-in upsets the runtime wrappers after codegen
                raise
    return codes, parse_kernels(codes, seen)


def parse_kernels(codes: list[str], seen: list[tuple[str, list]]) -> list[Kernel]:
    """Kernels in order of generation, their sources cut out of the code, their nodes merged."""
    text = "\n".join(codes)
    by_name: dict[str, Kernel] = {}
    extern_seen: dict[str, int] = {}
    for name, origins in seen:
        if name.startswith("extern_kernels.") or "." in name:
            count = extern_seen.get(name, 0)
            extern_seen[name] = count + 1
            key, source = f"{name}#{count}", _call_line(text, name, count)
            kind = "extern"
        else:
            key, source = name, _kernel_source(text, name)
            kind = "triton" if name.startswith("triton") else "cpp"
        kernel = by_name.setdefault(key, Kernel(key, kind, source=source))
        for node in origins:
            if node.op != "call_function":
                continue
            _add(kernel.nodes, source_node(node))
            _add(kernel.aten, node.name)
    return list(by_name.values())


def _add(items: list, item) -> None:
    if item not in items:
        items.append(item)


def _kernel_source(text: str, name: str) -> str:
    """The string literal that `name = async_compile.xxx(..., '''source''')` passes."""
    m = re.search(rf"^{re.escape(name)} = async_compile\.\w+\(", text, re.M)
    if not m:
        return ""
    quote = re.compile(r"r?('''|\"\"\")")
    start = quote.search(text, m.end())
    if not start:
        return ""
    end = text.find(start.group(1), start.end())
    return text[start.end():end].strip("\n") if end > 0 else ""


def _call_line(text: str, name: str, occurrence: int) -> str:
    """The `occurrence`-th call of an extern kernel in the wrapper, with the comment above it."""
    lines = text.splitlines()
    hits = [i for i, line in enumerate(lines) if f"{name}(" in line and not line.lstrip().startswith("#")]
    if occurrence >= len(hits):
        return ""
    i = hits[occurrence]
    above = lines[i - 1].strip() if i and lines[i - 1].lstrip().startswith("#") else ""
    return "\n".join(x for x in (above, lines[i].strip()) if x)


def dynamo_op_names(gm: torch.fx.GraphModule) -> list[str]:
    """The names Dynamo gives the calls of `gm` when it traces the module `gm` was written as
    and names nodes by target (numbered in order; its inputs are `L_..._`, so they never take
    an op's name), in graph order. Dynamo of torch 2.13 names them after the source's
    variables instead, which are `gm`'s own names: `kernel_node_names` takes whichever fits."""
    graph = torch.fx.Graph()
    return [graph.create_node(n.op, n.target, (), {}).name for n in gm.graph.nodes
            if n.op in ("call_function", "call_method", "call_module")]


def kernel_node_names(gm: torch.fx.GraphModule, kernels: list[Kernel]) -> dict[str, str]:
    """What `Kernel.nodes` says, mapped to `gm`'s node names: Dynamo named the nodes of the
    module `gm` was written as either by its variables (`gm`'s names) or by target; the
    naming under which more of the kernels' nodes are found is the one this torch used."""
    calls = [n.name for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module")]
    named = {name for kernel in kernels for name in kernel.nodes}
    by_variable, by_target = dict(zip(calls, calls)), dict(zip(dynamo_op_names(gm), calls))
    return max((by_variable, by_target), key=lambda names: len(named & names.keys()))


def kernels_of(kernels: list[Kernel], node: str) -> list[Kernel]:
    """The kernels that compute `node` (several when Inductor recomputes it in each user)."""
    return [k for k in kernels if node in k.nodes]


def nodes_of(names: list[str], kernels: list) -> list[str]:
    """The nodes the kernels `names` compute (Kernel or its dict form: a worker's answer), in the
    kernel map's naming (`kernel_node_names` maps it to a graph's)."""
    nodes: list[str] = []
    for kernel in kernels:
        name, computed = (kernel["name"], kernel["nodes"]) if isinstance(kernel, dict) else (kernel.name, kernel.nodes)
        if name in names:
            nodes.extend(n for n in computed if n not in nodes)
    return nodes
