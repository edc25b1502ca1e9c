"""The part of a Python file that defines some custom ops, cut out of it by its syntax tree.

A captured graph that calls `torch.ops.mylib.scale` replays only where `mylib::scale` is
registered: minify's workers, its own process and repro.py run in other processes than the
user's script. They get the op's definition as source, an AST slice of the file that defines it:
the top-level statements that define the op (a `@custom_op("mylib::scale")` or
`@triton_op(...)` function, a `Library("mylib", ...)`), those that register more of it
(`@scale.register_fake`, `lib.define(...)`, `@torch.library.impl(lib, ...)`, ...), and, taken
transitively, the imports, helpers, constants and `@triton.jit` kernels they name. Never the
script's main code: no `if __name__ == "__main__":` block, no statement that only uses the op.

`slice_names` cuts the same way around top-level names (a user's `@triton.jit` kernel).
Standard library only (ast): the slice is made from text, and tested without torch.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

# Methods and torch.library functions that register something of an op already made.
REGISTRATIONS = frozenset({
    "define", "impl", "fallback", "register_fake", "register_kernel", "register_autograd",
    "register_torch_dispatch", "register_vmap", "register_autocast", "impl_abstract", "_register_fake",
    "set_kernel_enabled", "register_effect"})


@dataclass
class OpSlice:
    """What `slice_ops` cut: `source` (the statements, in file order; "" when none), the ops it
    defines, and the ops asked for that no top-level statement defines (`missing`)."""
    source: str
    found: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def op_strings(qualname: str) -> tuple[str, str]:
    """("mylib", "scale") for "mylib::scale"."""
    namespace, _, name = qualname.partition("::")
    return namespace, name


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _names_op(strings: set[str], qualname: str) -> bool:
    """Does a statement with these string constants name the op ("mylib::scale", "mylib::scale.out")?"""
    return any(s == qualname or s.startswith(qualname + ".") for s in strings)


def _names_in_library(strings: set[str], qualname: str) -> bool:
    """Does a statement of the op's Library name it by its short name ("scale", "scale(Tensor x) -> Tensor")?"""
    name = op_strings(qualname)[1]
    return any(s == name or s.startswith((name + "(", name + ".")) for s in strings)


def _is_main_block(stmt: ast.stmt) -> bool:
    """`if __name__ == "__main__":` (either way round)."""
    return isinstance(stmt, ast.If) and "__name__" in _names(stmt.test) and "__main__" in _strings(stmt.test)


def _registering_part(stmt: ast.stmt) -> list[ast.AST]:
    """The parts of a top-level statement whose mention of an op or library makes it register
    something: a def's decorators, an expression statement's or assignment's call. A def's body
    (the program's own code that calls the op) never does."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return list(stmt.decorator_list)
    if isinstance(stmt, (ast.Expr, ast.Assign, ast.AnnAssign)) and isinstance(stmt.value, ast.Call):
        return [stmt.value]
    return []


def _calls_registration(part: ast.AST, bound: set[str]) -> bool:
    """`lib.define(...)`, `@scale.register_fake`, `torch.library.impl(lib, ...)(f)`: a
    registration on, or with, a name of the ops' own (`bound`)."""
    for node in ast.walk(part):
        if isinstance(node, ast.Attribute) and node.attr in REGISTRATIONS:
            base = node.value
            while isinstance(base, ast.Attribute):
                base = base.value
            if isinstance(base, ast.Name) and base.id in bound:
                return True
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in REGISTRATIONS and any(isinstance(a, ast.Name) and a.id in bound
                                             for a in [*node.args, *(k.value for k in node.keywords)]):
                return True
    return False


def bound_names(stmt: ast.stmt) -> set[str]:
    """Names a top-level statement binds (outside function bodies): defs, classes, imports, assignments."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {stmt.name}
    found: set[str] = set()
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            found.add(node.id)
        stack.extend(ast.iter_child_nodes(node))
    return found


def _roots(body: list[ast.stmt], qualnames: list[str]) -> tuple[set[int], set[str]]:
    """Statements that define or register the ops (by index), grown until no more attach, and the ops found."""
    chosen: set[int] = set()
    found: set[str] = set()
    namespaces = {op_strings(q)[0] for q in qualnames}
    bound: set[str] = set()
    grew = True
    while grew:
        grew = False
        for i, stmt in enumerate(body):
            if i in chosen or _is_main_block(stmt):
                continue
            parts = _registering_part(stmt)
            strings = set().union(*(_strings(p) for p in parts)) if parts else set()
            named = [q for q in qualnames if _names_op(strings, q)]
            library = bool(strings & namespaces) and any(isinstance(p, ast.Call) for p in parts)
            attached = bool(parts) and any(_calls_registration(p, bound) for p in parts)
            if named or library or attached:
                chosen.add(i)
                bound |= bound_names(stmt)
                found |= set(named) | {q for q in qualnames if attached and _names_in_library(strings, q)}
                grew = True
    return chosen, found


def _dependencies(body: list[ast.stmt], chosen: set[int]) -> set[int]:
    """`chosen` and every top-level statement binding a name they use, transitively (imports,
    helpers, constants, kernels); never the main block."""
    binders: dict[str, list[int]] = {}
    for i, stmt in enumerate(body):
        if not _is_main_block(stmt):
            for name in bound_names(stmt):
                binders.setdefault(name, []).append(i)
    todo, done = list(chosen), set(chosen)
    while todo:
        for name in _names(body[todo.pop()]):
            for i in binders.get(name, []):
                if i not in done:
                    done.add(i)
                    todo.append(i)
    return done


def _segment(lines: list[str], stmt: ast.stmt) -> str:
    start = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", []))])
    return "\n".join(lines[start - 1:stmt.end_lineno])


def slice_ops(text: str, qualnames: list[str]) -> OpSlice:
    """The statements of `text` (a module's source) that define the ops `qualnames` ("ns::name"),
    with what they need; SyntaxError as ast raises it."""
    body = ast.parse(text).body
    chosen, found = _roots(body, qualnames)
    return OpSlice(_kept(text, body, chosen), sorted(found), [q for q in qualnames if q not in found])


def slice_names(text: str, names: list[str]) -> OpSlice:
    """The top-level statements of `text` that bind `names` (a kernel's def, decorators and all),
    with what they need (`found` and `missing` hold names here); SyntaxError as ast raises it."""
    body = ast.parse(text).body
    chosen = {i for i, stmt in enumerate(body) if not _is_main_block(stmt) and bound_names(stmt) & set(names)}
    bound = set().union(*(bound_names(body[i]) for i in chosen)) if chosen else set()
    return OpSlice(_kept(text, body, chosen), [n for n in names if n in bound], [n for n in names if n not in bound])


def _kept(text: str, body: list[ast.stmt], chosen: set[int]) -> str:
    """The statements `chosen` and their dependencies, in file order ("" when none)."""
    keep = _dependencies(body, chosen) if chosen else set()
    lines = text.splitlines()
    return "\n\n".join(_segment(lines, body[i]) for i in sorted(keep)
                       if not (isinstance(body[i], ast.ImportFrom) and body[i].module == "__future__"))


def where_missing(text: str, qualname: str) -> str:
    """Why a slice lacks the op, in words after "mylib::scale ": defined below the top level, or not in this text."""
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Constant) and node.value == qualname:
            return f"is defined inside a function or block (line {node.lineno}), not at the top level of its file"
    return "is not defined in its file's source (a C++ extension, or a name built at run time)"
