"""Source-level reduction passes: each proposes smaller programs, in a fixed order.

A pass never runs anything: it maps a program's syntax tree to candidate trees (cheapest and
largest cuts first), and the reducer (minifier.program.source_reduce) tries them. Working on
the tree keeps every candidate parseable; whether it still runs and fails the same way is
the oracle's question.
"""
from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Callable, Iterator

BLOCK_FIELDS = ("body", "orelse", "finalbody")


@dataclass(frozen=True)
class SourcePass:
    name: str
    candidates: Callable[[ast.Module], Iterator[ast.Module]]
    description: str


def blocks(tree: ast.Module) -> list[tuple[ast.AST, str]]:
    """Every statement list in the tree, outermost first, in a deterministic order."""
    found = []
    for node in ast.walk(tree):
        for name in BLOCK_FIELDS:
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                found.append((node, name))
    return found


def _edit_block(tree: ast.Module, index: int, edit: Callable[[list], list]) -> ast.Module:
    """A copy of `tree` with block number `index` replaced by `edit(block)` (`pass` if emptied)."""
    new = copy.deepcopy(tree)
    node, name = blocks(new)[index]
    body = edit(list(getattr(node, name)))
    setattr(node, name, body or ([] if name != "body" or node is new else [ast.Pass()]))
    return new


def remove_statements(tree: ast.Module) -> Iterator[ast.Module]:
    """Drop runs of statements from each block: halves first, then single statements."""
    for index, (node, name) in enumerate(blocks(tree)):
        size = len(getattr(node, name))
        chunk = max(size // 2, 1)
        while chunk >= 1:
            for start in range(0, size, chunk):
                yield _edit_block(tree, index, lambda b, s=start, c=chunk: b[:s] + b[s + c:])
            chunk //= 2


def unwrap_compound_statements(tree: ast.Module) -> Iterator[ast.Module]:
    """Replace an if/for/while/with/try by its body (the loop's or branch's code runs once)."""
    for index, (node, name) in enumerate(blocks(tree)):
        for position, stmt in enumerate(getattr(node, name)):
            if isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                inner = _loop_prefix(stmt) + stmt.body
                yield _edit_block(tree, index, lambda b, p=position, i=inner: b[:p] + copy.deepcopy(i) + b[p + 1:])


def _loop_prefix(stmt: ast.stmt) -> list[ast.stmt]:
    """`for x in range(n): body` unwrapped keeps `x = 0`, so the body still has its variable."""
    if isinstance(stmt, ast.For) and isinstance(stmt.target, ast.Name):
        return [ast.Assign([ast.Name(stmt.target.id, ast.Store())], ast.Constant(0), lineno=0)]
    return []


def shrink_loop_counts(tree: ast.Module) -> Iterator[ast.Module]:
    """`range(n)` -> `range(1)`: fewer iterations of whatever the loop does."""
    yield from _replace_constants(tree, lambda node, parent: _is_range_arg(parent) and node.value > 1, lambda v: 1)


def shrink_int_literals(tree: ast.Module) -> Iterator[ast.Module]:
    """Each int literal above 2 -> 1, then half of it: smaller sizes, widths and counts."""
    wanted = lambda node, parent: not _is_range_arg(parent) and node.value > 2
    yield from _replace_constants(tree, wanted, lambda v: 1)
    yield from _replace_constants(tree, wanted, lambda v: v // 2)


def drop_keyword_arguments(tree: ast.Module) -> Iterator[ast.Module]:
    """Remove one keyword argument of a call (options that do not matter to the failure)."""
    calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and n.keywords]
    for call_index, call in enumerate(calls):
        for kw_index in range(len(call.keywords)):
            new = copy.deepcopy(tree)
            target = [n for n in ast.walk(new) if isinstance(n, ast.Call) and n.keywords][call_index]
            if not (isinstance(target.func, ast.Name) and target.func.id == "compiled_checked"
                    and target.keywords[kw_index].arg == "backend"):
                del target.keywords[kw_index]
                yield new


def hoist_subexpressions(tree: ast.Module) -> Iterator[ast.Module]:
    """Replace an expression by one of its operands: `f(a).g(b)` -> `f(a)` or `a`, `x * y` -> `x`."""
    exprs = _hoistable(tree)
    for index, node in enumerate(exprs):
        for choice in range(len(_operands(node))):
            new = copy.deepcopy(tree)
            target = _hoistable(new)[index]
            _replace_node(new, target, copy.deepcopy(_operands(target)[choice]))
            yield new


def _hoistable(tree: ast.Module) -> list[ast.expr]:
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript))
            and not (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "compiled_checked")]


def _operands(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.Call):
        receiver = [node.func.value] if isinstance(node.func, ast.Attribute) else []
        return receiver + [a for a in node.args if not isinstance(a, ast.Starred)]
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    return [node.operand] if isinstance(node, ast.UnaryOp) else [node.value]


def _replace_node(tree: ast.Module, old: ast.expr, new: ast.expr) -> None:
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, name, new)
                return
            if isinstance(value, list) and any(v is old for v in value):
                setattr(parent, name, [new if v is old else v for v in value])
                return


def _is_range_arg(parent: ast.AST | None) -> bool:
    return isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "range"


def _int_constants(tree: ast.Module) -> list[tuple[ast.Constant, ast.AST | None]]:
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    return [(n, parents.get(n)) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and type(n.value) is int]


def _replace_constants(tree: ast.Module, wanted, new_value) -> Iterator[ast.Module]:
    for index, (node, parent) in enumerate(_int_constants(tree)):
        if wanted(node, parent) and new_value(node.value) != node.value:
            new = copy.deepcopy(tree)
            _int_constants(new)[index][0].value = new_value(node.value)
            yield new


PASSES = (
    SourcePass("remove_statements", remove_statements, "drop runs of statements, halves first"),
    SourcePass("unwrap_compound_statements", unwrap_compound_statements, "replace if/for/while/with/try by its body"),
    SourcePass("hoist_subexpressions", hoist_subexpressions, "replace an expression by one of its operands"),
    SourcePass("shrink_loop_counts", shrink_loop_counts, "range(n) -> range(1)"),
    SourcePass("drop_keyword_arguments", drop_keyword_arguments, "remove keyword arguments of calls"),
    SourcePass("shrink_int_literals", shrink_int_literals, "int literals -> 1, then halved"),
)
