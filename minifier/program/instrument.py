"""A program that judges itself: every torch.compile'd call is checked against eager.

Source-level reduction needs an oracle that one run of a candidate program answers. So the
program is rewritten once: each `torch.compile(...)` (call or decorator) becomes
`compiled_checked(...)`, defined by a short prologue. A checked call first runs the original
function eagerly on deep copies of its arguments (the RNG state forked, so both see the same
random numbers), then the compiled function on the real ones, and ends the program with one
line when they disagree: `torch.compile raised where eager did not: ...` or `torch.compile
differs from eager: ...`. That line is the failure signature a candidate must keep; a
candidate that fails any other way (its eager part broke) is rejected. The same text is the
repro: it exits 1 with the line while the bug is there and 0 once it is fixed.
"""
from __future__ import annotations

import ast
import itertools
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from compiler.aoti_control import control_command
from compiler.judging import Judging
from compiler.signature import core_error, last_exception, program_signature
from minifier.workers.zygote import run_script

PROLOGUE = '''import copy
import torch

SIGNED_ZERO = True  # a zero's sign judged where every value equals eager's (False: --ignore signed-zero)


def compiled_checked(fn=None, **options):  # torch.compile(fn), checked against fn on copies of the inputs
    if fn is None:
        return lambda f: compiled_checked(f, **options)
    compiled = torch.compile(fn, **options)

    def call(*args, **kwargs):
        with torch.random.fork_rng():
            expected = copy.deepcopy(fn)(*copy.deepcopy(args), **copy.deepcopy(kwargs))
        try:
            actual = compiled(*args, **kwargs)
        except Exception as exc:
            raise SystemExit(f"torch.compile raised where eager did not: {type(exc).__name__}: "
                             + (str(exc).strip().splitlines() or [""])[0])
        leaves = [torch.utils._pytree.tree_leaves(v) for v in (actual, expected)]
        try:
            assert len(leaves[0]) == len(leaves[1]), "output structure differs"
            for a, e in zip(*leaves):  # minify's own tolerances, by dtype
                tol = {torch.float64: 1e-7, torch.float16: 1e-3, torch.bfloat16: 1e-2}.get(getattr(e, "dtype", 0), 1e-4)
                torch.testing.assert_close(a, e, rtol=tol, atol=tol, equal_nan=True)
                if SIGNED_ZERO and torch.is_tensor(a) and a.is_floating_point() and bool((a == e).all()):
                    assert torch.equal(a.signbit(), e.signbit()), "the sign of zero differs"
        except AssertionError as exc:
            raise SystemExit("torch.compile differs from eager: " + " ".join(str(exc).split())[:300])
        return actual
    return call
'''
MARKS = ("torch.compile raised where eager did not:", "torch.compile differs from eager:")


class UseChecked(ast.NodeTransformer):
    """`torch.compile` -> `compiled_checked`, with `backend` forced where a layer was blamed."""

    def __init__(self, backend: str | None):
        self.backend = backend

    def visit_Attribute(self, node: ast.Attribute):
        self.generic_visit(node)
        if node.attr == "compile" and isinstance(node.value, ast.Name) and node.value.id == "torch":
            return ast.copy_location(ast.Name("compiled_checked", ast.Load()), node)
        return node

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if self.backend and isinstance(node.func, ast.Name) and node.func.id == "compiled_checked":
            node.keywords = [k for k in node.keywords if k.arg not in ("backend", "mode", "options")]
            node.keywords.append(ast.keyword("backend", ast.Constant(self.backend)))
        return node


def instrument(source: str, backend: str | None = None) -> ast.Module:
    """The program's tree with every torch.compile checked (the prologue is added when written)."""
    tree = UseChecked(backend).visit(ast.parse(source))
    return ast.fix_missing_locations(tree)


PROJECT_PACKAGES = ("compiler", "minifier", "repro")


def project_statements(tree: ast.Module) -> list[ast.stmt]:
    """Module-level statements that import this project or call what was imported from it: how
    a corpus program plants its bug. Reduction never changes them (it would change the bug)."""
    names = {alias.asname or alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
             and (node.module or "").split(".")[0] in PROJECT_PACKAGES for alias in node.names}
    return [s for s in tree.body if _is_project(s, names)]


def _is_project(stmt: ast.stmt, names: set[str]) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        modules = [stmt.module or ""] if isinstance(stmt, ast.ImportFrom) else [a.name for a in stmt.names]
        return any(m.split(".")[0] in PROJECT_PACKAGES for m in modules)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return bool({n.id for n in ast.walk(stmt.value) if isinstance(n, ast.Name)} & names)
    return False


EAGER_PROLOGUE = '''import torch


def compiled_checked(fn=None, **options):  # the control run: nothing compiled
    return fn if fn is not None else (lambda f: f)
'''
PLAIN_PROLOGUE = '''import torch

compiled_checked = torch.compile
'''


def prologue_of(judging: Judging = Judging()) -> str:
    """The self-checking prologue as the run judges: the sign of zero not judged under
    `--ignore signed-zero` (as minifier.program.interaction does not)."""
    return PROLOGUE.replace("SIGNED_ZERO = True", "SIGNED_ZERO = False", 1) if "signed_zero" in judging.ignore \
        else PROLOGUE


def render(tree: ast.Module, mode: str = "check", judging: Judging = Judging()) -> str:
    """The program as text: `check` with the self-checking prologue; `plain` compiled as the
    program does it, judged by how it ends; `eager`, the plain program's control run."""
    prologue = {"check": prologue_of(judging), "plain": PLAIN_PROLOGUE, "eager": EAGER_PROLOGUE}[mode]
    return prologue + "\n\n" + ast.unparse(tree) + "\n"


def program_lines(tree: ast.Module) -> int:
    """Lines of the program itself (without the prologue): the size a reduction shrinks."""
    return len([line for line in ast.unparse(tree).splitlines() if line.strip()])


@dataclass
class RunResult:
    code: int | None  # None: it hung past the timeout
    line: str  # the failure line (one of MARKS), the exception that ended it, or the last line on stderr
    error: str | None = None  # that exception's signature (compiler.signature.program_signature), if any

    def signature_in(self, mode: str) -> str | None:
        """`check` mode: the disagreement line; `plain`/`eager`: the exception that ended it
        (its type and first meaningful line, never Dynamo's advice), else its exit status."""
        if mode == "check":
            return self.signature
        if self.code in (0, None):
            return None if self.code == 0 else "hang"
        return self.error or f"exit status {self.code}"

    @property
    def passed(self) -> bool:
        """It ran to its end: exit status 0."""
        return self.code == 0

    @property
    def signature(self) -> str | None:
        """What a candidate must keep: the kind of disagreement and, for a raise, the exception."""
        for mark in MARKS:
            if self.line.startswith(mark):
                return mark + " " + kind_of(self.line[len(mark):].strip(), raised=mark == MARKS[0])
        return None


def kind_of(detail: str, raised: bool) -> str:
    """The kind of a disagreement, without its numbers: a raise's exception type with the ones
    it wraps (`InductorError: CppCompileError`); an assert_close's first clause (`The values for
    attribute 'shape' do not match`, `Tensor-likes are not close! Mismatched elements`). A
    candidate whose outputs differ only in values (a resize_ that leaves memory unset) is then no
    longer taken for the program's wrong shape."""
    parts = detail.split(": ")
    if raised:
        names = [parts[0]] + list(itertools.takewhile(lambda p: re.fullmatch(r"[A-Za-z_][\w.]*", p), parts[1:-1]))
        return ": ".join(names)
    return re.sub(r"\d+", "N", parts[0])


RANK_PREFIX = re.compile(r"^\[rank\d+\]: ?", re.MULTILINE)


def run_program(path: Path, cwd: Path, timeout: float, extra_path: list[str] = (), zygote=None,
                control: bool = False) -> RunResult:
    """Run one candidate in a process of its own: forked from the warm zygote when there is
    one (no `import torch` per candidate), else a fresh interpreter; caches off either way.
    `control`: in a fresh interpreter with TORCHDYNAMO_DISABLE=1 (torch.compile compiles nothing)."""
    forked = None if zygote is None or control else run_script(zygote, path, [], cwd, timeout)
    if forked is not None:
        code, stderr = forked[0], forked[2]
    else:
        env = {**os.environ, "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "PYTHONWARNINGS": "ignore",
               **({"TORCHDYNAMO_DISABLE": "1"} if control else {}),
               "PYTHONPATH": os.pathsep.join([*extra_path, os.environ.get("PYTHONPATH", "")]).strip(os.pathsep)}
        try:
            command = control_command(path) if control else [sys.executable, str(path)]  # AOTInductor off too
            proc = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True,
                                  timeout=timeout, stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return RunResult(None, "timed out")
        code, stderr = proc.returncode, proc.stderr
    stderr = RANK_PREFIX.sub("", stderr or "")  # a process group's excepthook writes "[rank0]: " before each line
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    failure = next((line for line in reversed(lines) if line.startswith(MARKS)), None)
    raised = last_exception(stderr) if failure is None and code else None
    if raised is None:
        return RunResult(code, failure or (lines[-1] if lines else ""))
    name, line = core_error(*raised)
    return RunResult(code, f"{name}: {line}"[:500], program_signature(*raised))
