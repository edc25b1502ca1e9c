"""User Triton kernels that a captured graph launches, carried wherever the graph goes.

A `@triton.jit` kernel called from compiled code becomes a launch in Dynamo's graph:
`torch.ops.higher_order.triton_kernel_wrapper_mutation(kernel_idx=0, constant_args_idx=1, ...)`,
where both numbers index a table of the capturing process (kernel_side_table). Another
process (a worker, repro.py) has an empty table, and a number that means one kernel here may
mean another there. So the graph's source carries, ahead of the graph, one block that defines
the kernels (an AST slice of each kernel's file, compiler/op_source.py: the kernel, the
`@triton.jit` helpers and constants it names, its imports) and adds them and the launches'
constant arguments to the table of the process that loads it, which hands out its own numbers:

    # minify: user Triton kernels add_kernel (AST slices of /path/script.py)
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table as MINIFY_SIDE_TABLE
    ...the slice...
    MINIFY_KERNELS = {0: MINIFY_SIDE_TABLE.add_kernel(add_kernel)}
    MINIFY_CONSTANT_ARGS = {1: MINIFY_SIDE_TABLE.add_constant_args({'n': 40, 'BLOCK': 16})}
    # minify: end of user Triton kernels

and the graph's launches read `kernel_idx = MINIFY_KERNELS[0]`. A graph traced back from that
source holds the loading process's numbers, whose kernels (defined in the loaded file) are
sliced again the same way when a candidate of it is written.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import torch.fx as fx
from torch._ops import HigherOrderOperator

from compiler.op_source import slice_names

LAUNCHES = frozenset({"triton_kernel_wrapper_mutation", "triton_kernel_wrapper_functional"})
BEGIN = "# minify: user Triton kernels "
END = "# minify: end of user Triton kernels"
_TABLE_NUMBER = re.compile(r"\b(kernel_idx|constant_args_idx) = (\d+)")
_VIEWS = re.compile(r"^(view|reshape|as_strided|select|slice|getitem|t|transpose|permute|expand|unsqueeze|squeeze|"
                    r"flatten|unflatten|narrow|diagonal|view_as|unbind|split|chunk)(\.|$)")
_DICTS = {"kernel_idx": "MINIFY_KERNELS", "constant_args_idx": "MINIFY_CONSTANT_ARGS"}


class UncarriedKernel(ValueError):
    """A user kernel minify cannot carry to another process: one sentence."""


def is_launch(target) -> bool:
    """Is `target` the launch of a user Triton kernel (it writes into the tensors it is given)?"""
    return isinstance(target, HigherOrderOperator) and target.name() in LAUNCHES


def launches(gm: fx.GraphModule) -> list[fx.Node]:
    return [n for n in gm.graph.nodes if n.op == "call_function" and is_launch(n.target)]


def launched_inputs(gm: fx.GraphModule) -> list[int]:
    """Positions of `gm`'s inputs that a launch is given (directly or through views): the kernel may
    write them, and its writes leave no trace a value check could see where it writes the values
    they held (a buffer cut out of a graph holds what the kernel wrote into it)."""
    given = {a for n in launches(gm) for a in n.kwargs["kwargs"].values() if isinstance(a, fx.Node)}
    seen: set[fx.Node] = set()
    while given - seen:
        node = (given - seen).pop()
        seen.add(node)
        if node.op != "placeholder" and _VIEWS.search(str(getattr(node.target, "__name__", node.target))):
            given |= set(node.all_input_nodes[:1])
    return [i for i, p in enumerate(gm.graph.find_nodes(op="placeholder")) if p in seen]


def named_launches(forward: str) -> str:
    """`forward` (FX's code of a graph) with its launches' table numbers read from the block's dicts."""
    return "\n".join(_TABLE_NUMBER.sub(lambda m: f"{m[1]} = {_DICTS[m[1]]}[{m[2]}]", line)
                     if "triton_kernel_wrapper_" in line else line for line in forward.split("\n"))


def kernel_block(gm: fx.GraphModule) -> str:
    """The block defining and registering the kernels and constant arguments `gm`'s launches
    name ("" when it launches none); UncarriedKernel when a kernel's definition cannot be cut."""
    calls = launches(gm)
    if not calls:
        return ""
    from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table

    kernels = dict.fromkeys(n.kwargs["kernel_idx"] for n in calls)
    constants = dict.fromkeys(n.kwargs["constant_args_idx"] for n in calls)
    by_file: dict[Path, list[str]] = {}
    names: dict[int, str] = {}
    for idx in kernels:
        path, name = _defining(kernel_side_table.get_kernel(idx))
        by_file.setdefault(path, []).append(name)
        names[idx] = name
    slices = []
    for path, wanted in by_file.items():
        cut = slice_names(path.read_text(), sorted(set(wanted)))
        if cut.missing:
            raise UncarriedKernel(f"it launches the Triton kernel {cut.missing[0]}, which is not defined at the top "
                                  f"level of {path}, so minify cannot carry it to another process")
        slices.append(cut.source)
    registered = ", ".join(f"{i}: MINIFY_SIDE_TABLE.add_kernel({names[i]})" for i in kernels)
    args = ", ".join(f"{i}: MINIFY_SIDE_TABLE.add_constant_args({_literal(kernel_side_table.get_constant_args(i))})"
                     for i in constants)
    files = ", ".join(str(p) for p in by_file)
    return "\n".join([f"{BEGIN}{', '.join(dict.fromkeys(names.values()))} (AST slices of {files})",
                      "from torch._higher_order_ops.triton_kernel_wrap import kernel_side_table as MINIFY_SIDE_TABLE",
                      *slices, f"MINIFY_KERNELS = {{{registered}}}", f"MINIFY_CONSTANT_ARGS = {{{args}}}", END])


def _defining(kernel) -> tuple[Path, str]:
    """The file that defines `kernel` (a JITFunction, or an Autotuner around one) and the top-level
    name it has there."""
    jit = getattr(kernel, "fn", None) if not hasattr(kernel, "src") else kernel  # an Autotuner wraps the JITFunction
    fn = getattr(jit, "fn", None)
    if fn is None or not hasattr(fn, "__code__"):
        raise UncarriedKernel(f"it launches the Triton kernel {kernel!r}, whose Python function minify cannot find")
    name = next((k for k, v in fn.__globals__.items() if v is kernel), None)
    path = Path(fn.__code__.co_filename)
    if name is None or not path.is_file():
        raise UncarriedKernel(f"it launches the Triton kernel {fn.__name__}, which is not a top-level name of a "
                              f"Python file ({path}), so minify cannot carry it to another process")
    return path, name


def _literal(args: dict) -> str:
    """`args` as source that evaluates back to them; UncarriedKernel for a value that has none."""
    text = repr(args)
    try:
        if ast.literal_eval(text) == args:
            return text
    except (ValueError, SyntaxError):
        pass
    raise UncarriedKernel(f"a Triton kernel's constant arguments ({text[:80]}) cannot be written as source")
