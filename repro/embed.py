"""The oracle's own source, ready to paste into a standalone repro.

repro.py must need nothing but torch, yet judge a run exactly as the tool did; so it carries
the tool's signature and oracle modules verbatim, minus their docstrings and the one import
that links them inside this project.
"""
from __future__ import annotations

import ast
from pathlib import Path

MINIFIER = Path(__file__).resolve().parents[1] / "minifier"
EMBEDDED = ("signature.py", "oracle.py")
SKIP_MARK = "# minify: embed-skip"


def _body(path: Path) -> str:
    source = path.read_text()
    tree = ast.parse(source)
    first = tree.body[0]
    lines = source.splitlines()
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        lines = lines[first.end_lineno:]
    return "\n".join(line for line in lines if SKIP_MARK not in line).strip("\n")


def oracle_source() -> str:
    return "\n\n\n".join(_body(MINIFIER / name) for name in EMBEDDED) + "\n"
