"""The oracle's own source, written beside a repro so the repro judges a run as the tool did.

repro.py must need nothing but torch, yet use the one oracle the tool used for every
candidate; pasting ~250 lines of it into repro.py would bury the bug. So the signature and
oracle modules go verbatim (minus their docstrings and the imports that link them inside this
project) into a sidecar file, followed by the small runner that repro.py calls. The file's
name carries a hash of its content: it cannot be mistaken for a user's module, and repro.py
and generated tests load it by absolute path, never by a bare module name a user's file
could shadow.
"""
from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SIDECAR_PARTS = (ROOT / "compiler" / "rungs.py", ROOT / "compiler" / "signature.py", ROOT / "compiler" / "oracle.py",
                 ROOT / "compiler" / "context.py",
                 ROOT / "repro" / "runner.py")
SIDECAR_PREFIX = "_minify_oracle_"
SKIP_MARK = "# minify: embed-skip"

SIDECAR_HEADER = '''"""minify's oracle and repro runner, loaded by the repro.py (or test) beside this file.

Written by minify verbatim from its own compiler/signature.py, compiler/oracle.py,
compiler/context.py and repro/runner.py: the same code judged every candidate while the bug was being minimized.
Needs only torch. Keep this file next to repro.py.
"""
'''


def _body(path: Path) -> str:
    source = path.read_text()
    tree = ast.parse(source)
    first = tree.body[0]
    lines = source.splitlines()
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        lines = lines[first.end_lineno:]
    return "\n".join(line for line in lines if SKIP_MARK not in line).strip("\n")


PROJECT_IMPORT = re.compile(r"^\s*(from|import)\s+(minifier|compiler|repro)\b", re.M)


def sidecar_source() -> str:
    """The sidecar's full text: header, signature, oracle, runner. It must need only torch: an
    import of this project left in (without the embed-skip mark) is a bug here, not in a repro."""
    text = SIDECAR_HEADER + "\n" + "\n\n\n".join(_body(path) for path in SIDECAR_PARTS) + "\n"
    found = PROJECT_IMPORT.search(text)
    if found:
        raise RuntimeError(f"the embedded oracle imports this project ({found.group(0).strip()}); "
                           f"mark the line with {SKIP_MARK!r} or keep the oracle standalone")
    return text


def sidecar_name(source: str) -> str:
    return f"{SIDECAR_PREFIX}{hashlib.sha256(source.encode()).hexdigest()[:10]}.py"


def write_sidecar(folder: Path) -> Path:
    """Write the sidecar into `folder` (unchanged if already there) and return its path."""
    source = sidecar_source()
    path = folder / sidecar_name(source)
    if not path.exists() or path.read_text() != source:
        path.write_text(source)
    return path
