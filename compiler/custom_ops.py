"""Custom ops (`torch.library`) that a captured graph calls, carried wherever the graph goes.

A graph that calls `torch.ops.mylib.scale` replays only where `mylib::scale` is registered. The
capture finds the file that defines each op outside torch's own namespaces (the custom_op's
function, its fake's, or the script), cuts the definitions out of it (compiler/op_source.py)
and puts them in the graph's source, ahead of the graph, as one block:

    # minify: definitions of custom ops mylib::scale (an AST slice of /path/script.py)
    if not hasattr(torch.ops.mylib, "scale"):  # registered once per process
        ...the slice, indented...
    # minify: end of custom op definitions

Every process that loads a graph's source (module_from_source: the parent, the workers) thus
registers the ops once, and remembers the block (`remember_blocks`) to write it again into every
candidate and into repro.py, which stays standalone. An op whose definition cannot be found or
cut (a C++ extension, an op made inside a function) makes the graph unreplayable, said in one
sentence (UncarriedOp), never a verdict on a graph the workers cannot run; an op whose module can
be imported is then imported, and the block says that the repro needs it.

`definition_faults` tells the user's op from the compiler: a failing graph whose op writes inputs
its schema says it does not, or whose fake (register_fake) disagrees with what the op returns,
is the user's definition at fault.
"""
from __future__ import annotations

import inspect
import os
import re
import sys
import textwrap
from pathlib import Path

import torch
import torch.fx as fx
from torch._ops import OpOverload, OpOverloadPacket

from compiler.op_source import op_strings, slice_ops, where_missing

# Namespaces whose ops torch itself defines (its C++ library, or modules of its own).
TORCH_NAMESPACES = frozenset({
    "aten", "prims", "prim", "quantized", "_quantized", "quantized_decomposed", "_c10d_functional",
    "_c10d_functional_autograd", "c10d", "c10d_functional", "_dtensor", "_inductor_test", "_test", "_native",
    "debug_mode_ops", "debugprims", "export", "flex_lib", "fsdp", "inductor", "inductor_prims", "mkl", "mkldnn",
    "mkldnn_prepacked", "onednn", "onnx", "onnx_symbolic", "profiler", "quantization", "rngprims", "sparse",
    "static_runtime", "streams", "symm_mem", "higher_order", "_higher_order_ops", "cuda", "xpu", "mps"})
BEGIN = "# minify: definitions of custom ops "
END = "# minify: end of custom op definitions"
_BLOCK = re.compile(rf"^{re.escape(BEGIN)}([\w:]+(?:, [\w:]+)*).*?^{re.escape(END)}$", re.M | re.S)
_known: dict[str, str] = {}  # qualname -> its block, in this process ("" for torch's own)


class UncarriedOp(ValueError):
    """A custom op whose definition minify cannot carry to another process: one sentence."""


def qualname(target) -> str | None:
    """"mylib::scale" for torch.ops.mylib.scale (.default); None for anything not an op."""
    if isinstance(target, OpOverload):
        return target._schema.name
    if isinstance(target, OpOverloadPacket):
        return target._qualified_op_name
    return None


def op_schema(target):
    """The schema of an op, or of an op packet's one overload (Dynamo writes `torch.ops.mylib.scale(x)`,
    called on the packet, as the packet); None for anything else."""
    if isinstance(target, OpOverload):
        return target._schema
    if isinstance(target, OpOverloadPacket) and target.overloads() == ["default"]:
        return target.default._schema
    return None


def user_ops(gm: fx.GraphModule) -> list[str]:
    """The ops `gm` calls outside torch's own namespaces, sorted."""
    found = {qualname(n.target) for n in gm.graph.nodes if n.op == "call_function"}
    return sorted(q for q in found if q is not None and op_strings(q)[0] not in TORCH_NAMESPACES)


def remember_blocks(source: str) -> None:
    """Keep the definition blocks a graph's source holds, for the candidates made from it here."""
    for match in _BLOCK.finditer(source):
        for op in match.group(1).split(", "):
            _known.setdefault(op, match.group(0))


def carried_ops(source: str) -> list[str]:
    """The custom ops whose definition blocks `source` holds, in order."""
    return list(dict.fromkeys(op for m in _BLOCK.finditer(source) for op in m.group(1).split(", ")))


def definitions(gm: fx.GraphModule) -> str:
    """The blocks defining the custom ops `gm` calls ("" when none); UncarriedOp when one cannot be carried."""
    ops = user_ops(gm)
    missing = [q for q in ops if q not in _known]
    if missing:
        _carry(missing)
    return "\n\n".join(dict.fromkeys(_known[q] for q in ops if _known[q]))


def _carry(ops: list[str]) -> None:
    by_file: dict[Path, list[str]] = {}
    for q in ops:
        path = defining_file(q)
        if path is not None and Path(torch.__file__).parent in path.parents:
            _known[q] = ""  # torch's own (a namespace made by one of its modules): nothing to carry
        elif path is None:
            _known[q] = _import_block(q, "minify found no Python file that defines it (a C++ extension?)")
        else:
            by_file.setdefault(path, []).append(q)
    for path, qs in by_file.items():
        text = path.read_text()
        # every op of these namespaces the file defines, in one block: a later graph calling another of
        # them reuses it (a second block would make the same Library, or define the same op, twice)
        spaces = {op_strings(q)[0] for q in qs}
        cut = slice_ops(text, sorted(set(qs) | {op for op in torch._C._dispatch_get_all_op_names()
                                                if op_strings(op)[0] in spaces and op not in _known}))
        block = _block(cut.found, cut.source, path) if cut.found else ""
        for q in cut.found:
            _known[q] = block
        for q in qs:
            if q not in cut.found:
                _known[q] = _import_block(q, f"it {where_missing(text, q)} ({path})")


def defining_file(q: str) -> Path | None:
    """The file that defines op `q`: its custom_op function's, its fake's, the script's or a module of the
    user's, the first whose top level defines it (else the first that names it, for the reason why not)."""
    from torch._library.custom_ops import OPDEFS
    from torch._library.simple_registry import singleton

    places = []
    if q in OPDEFS:
        places.append(inspect.unwrap(OPDEFS[q]._init_fn).__code__.co_filename)
    kernel = singleton.find(q).fake_impl.kernel
    if kernel is not None:
        places.append(kernel.source.rsplit(":", 1)[0])
    main = getattr(sys.modules.get("__main__"), "__file__", None)
    places += [main] if main else []
    places += _user_module_files()  # a Library op registered with impl alone names no function of its own
    paths = [Path(os.path.abspath(p)) for p in dict.fromkeys(places)]
    naming = [p for p in paths if p.suffix == ".py" and (q in _text(p) or f'"{op_strings(q)[0]}"' in _text(p))]
    return next((p for p in naming if _defines(p, q)), naming[0] if naming else None)


def _defines(path: Path, q: str) -> bool:
    try:
        return bool(slice_ops(_text(path), [q]).found)
    except SyntaxError:
        return False


def _user_module_files() -> list[str]:
    """Files of the modules loaded from outside Python's installation and minify (the user's own)."""
    installed = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    root = Path(__file__).resolve().parents[1]  # and not minify's own (its docstrings name example ops)
    installed |= {str(root / part) for part in ("compiler", "minifier", "repro")}
    files = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and path.endswith(".py") and not any(os.path.realpath(path).startswith(p + os.sep) for p in installed):
            files.append(path)
    return files


def _text(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return ""


def _guard(ops: list[str]) -> str:
    pairs = ", ".join(f"({ns!r}, {name!r})" for ns, name in map(op_strings, ops))
    return f"if not any(hasattr(getattr(torch.ops, ns), name) for ns, name in ({pairs},)):  # once per process"


def _block(ops: list[str], source: str, path: Path) -> str:
    body = textwrap.indent(source, "    ")
    return "\n".join([f"{BEGIN}{', '.join(ops)} (an AST slice of {path})", _guard(ops), body, END])


def _import_block(q: str, why: str) -> str:
    """`import MODULE` where the op's own module can be imported (the repro then needs it installed);
    else UncarriedOp."""
    from torch._library.custom_ops import OPDEFS

    module = OPDEFS[q]._init_fn.__module__ if q in OPDEFS else op_strings(q)[0]
    if module in sys.modules and module != "__main__" and getattr(sys.modules[module], "__spec__", None) is not None:
        return "\n".join([f"{BEGIN}{q} (imported: {why}; this repro needs the module {module} installed)",
                          f"import {module}", END])
    raise UncarriedOp(f"it calls the custom op {q}, whose definition minify cannot carry to another process: {why}")


def definition_faults(gm: fx.GraphModule, args: list) -> list[str]:
    """Where the user's op is defined wrongly on the real arguments the graph gives it, one
    sentence each (torch.library.opcheck): it writes into or aliases inputs its schema says it
    does not (test_schema), or its fake (register_fake) disagrees with what it returns
    (test_faketensor); [] when every custom op of `gm` passes or none could be checked. Runs `gm`
    eagerly on `args`. The compiler plans its code on the schema and the fake."""
    ops = set(user_ops(gm)) if isinstance(gm, fx.GraphModule) else set()
    if not ops:
        return []
    calls: dict[str, tuple] = {}

    class Recorder(fx.Interpreter):
        def call_function(self, target, a, kw):
            q = qualname(target)
            if q in ops and q not in calls:  # the arguments as the op got them: it may write them
                calls[q] = (target, *torch.utils._pytree.tree_map_only(torch.Tensor, torch.clone, (a, kw)))
            return super().call_function(target, a, kw)

    try:
        with torch.no_grad():  # on copies: the graph may write into its inputs
            Recorder(gm).run(*[a.clone() if isinstance(a, torch.Tensor) else a for a in args])
    except Exception:  # eager fails on them: not this check's to say
        pass
    found = []
    for q, (target, a, kw) in calls.items():
        overload = getattr(target, "default", None) if isinstance(target, OpOverloadPacket) else target
        if overload is None:
            continue
        try:
            result = torch.library.opcheck(overload, a, kw, test_utils=tuple(FAULTS), raise_exception=False)
        except Exception:  # opcheck itself could not run it: no finding
            continue
        for test, what in FAULTS.items():
            failed = result.get(test)
            if failed not in (None, "SUCCESS"):
                reason = (getattr(failed, "reason", None) or str(failed)).strip().splitlines() or [""]
                found.append(f"{what.format(q=q)} (opcheck on the graph's real inputs: {reason[0]})")
    return found


# What each torch.library.opcheck test finds wrong in an op's definition, as a sentence's start.
FAULTS = {"test_schema": "{q} writes into or aliases inputs that its schema (mutates_args) says it does not",
          "test_faketensor": "the fake (register_fake) of {q} disagrees with the op"}
