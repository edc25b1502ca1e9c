"""Every third-party module the package imports is declared in pyproject.toml.

A new user installs what pyproject.toml declares and nothing else (`.ci/run` does the same in
an empty virtual environment), so an undeclared import is a crash on their machine that no
developer's machine shows. The imports are read with `ast`, at module level and inside
functions, in compiler/, repro/ and minifier/.

What is needed, decided per dependency:
- torch: the subject; everything runs it.
- rich: the console display (progress, summary tables).
- hypothesis: only `minify fuzz`, so it is the `fuzz` extra. Its imports live in
  minifier/fuzz/ alone, which only the `fuzz` command loads; without the extra that command
  says how to install it, in one line, and everything else works.
- numpy: minify never imports it (saving and hashing tensors goes through torch) and runs
  without it. The `fuzz` extra declares it all the same: PyTorch's OpInfo database
  (torch.testing._internal.common_methods_invocations), which the fuzzer draws its ops
  from, imports it (TRANSITIVE below, checked to still hold).
An import inside `try: ... except ImportError` (or ModuleNotFoundError) is optional by
construction (e.g. `expecttest`, stubbed when PyTorch's dev dependency is absent).
"""
from __future__ import annotations

import ast
import re
import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compiler", "repro", "minifier")
# Where each extra's imports may live: folders only the extra's own command loads.
EXTRA_HOMES = {"fuzz": ("minifier/fuzz",), "cluster": ("minifier/fuzz", "minifier/batch")}
NEEDED_FOR = {"torch": "the compiler under test", "rich": "the console display"}
# Declared for an extra although minify does not import them: (extra, module of ours that loads
# the module that needs it, that module).
TRANSITIVE = {"numpy": ("fuzz", "minifier/fuzz/op_catalog.py", "torch.testing._internal.common_methods_invocations")}


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _requirement_name(requirement: str) -> str:
    return re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1)


def declared() -> tuple[list[str], dict[str, list[str]]]:
    """(core distributions, {extra: distributions}) from pyproject.toml; `minify[x]` expands."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = [_requirement_name(r) for r in project.get("dependencies", [])]
    raw = project.get("optional-dependencies", {})

    def expand(extra: str) -> list[str]:
        names = []
        for r in raw[extra]:
            m = re.match(r"\s*minify\[([^\]]+)\]", r)
            names += [n for e in m.group(1).split(",") for n in expand(e.strip())] if m else [_requirement_name(r)]
        return names

    return core, {extra: expand(extra) for extra in raw}


def import_names(distribution: str) -> set[str]:
    """The top-level modules a distribution provides: from its installed metadata when it is
    installed, else its name as a module (true of torch, rich, hypothesis, pytest)."""
    names = {top for top, dists in metadata.packages_distributions().items()
             if _norm(distribution) in {_norm(d) for d in dists}}
    return names or {_norm(distribution).replace("-", "_")}


def _guarded(handler_types: ast.expr | None) -> bool:
    if handler_types is None:  # bare except
        return True
    items = handler_types.elts if isinstance(handler_types, ast.Tuple) else [handler_types]
    return any(isinstance(t, ast.Name) and t.id in ("ImportError", "ModuleNotFoundError") for t in items)


def imports(tree: ast.AST):
    """(line, top-level module, guarded) for every absolute import in `tree`, at any depth;
    guarded: inside the body of a `try` whose handlers catch ImportError."""
    def walk(node, guarded):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name.split(".")[0], guarded
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module.split(".")[0], guarded
        if isinstance(node, ast.Try):
            inner = guarded or any(_guarded(h.type) for h in node.handlers)
            for child in node.body:
                yield from walk(child, inner)
            for child in [*node.handlers, *node.orelse, *node.finalbody]:
                yield from walk(child, guarded)
            return
        for child in ast.iter_child_nodes(node):
            yield from walk(child, guarded)

    yield from walk(tree, False)


def package_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def all_imports() -> list[tuple[str, int, str, bool]]:
    rows = []
    for path in package_files():
        rel = path.relative_to(ROOT).as_posix()
        for line, top, guarded in imports(ast.parse(path.read_text(), str(path))):
            rows.append((rel, line, top, guarded))
    return rows


def test_the_walk_sees_imports_in_functions_and_guards():
    tree = ast.parse(textwrap.dedent("""\
        import os.path, torch
        from rich.console import Console
        from . import sibling
        def f():
            import hypothesis
            try:
                import expecttest
            except ImportError:
                import fallback
        """))
    assert list(imports(tree)) == [(1, "os", False), (1, "torch", False), (2, "rich", False),
                                   (5, "hypothesis", False), (7, "expecttest", True), (9, "fallback", False)]


def test_every_import_is_stdlib_own_or_declared():
    core, extras = declared()
    core_modules = {m for d in core for m in import_names(d)}
    extra_modules = {extra: {m for d in dists for m in import_names(d)} for extra, dists in extras.items()
                     if extra in EXTRA_HOMES}
    problems = []
    for rel, line, top, guarded in all_imports():
        if top in sys.stdlib_module_names or top in PACKAGES or top in core_modules or top == "__future__":
            continue
        owners = [extra for extra, modules in extra_modules.items() if top in modules]
        if owners:
            if not (guarded or any(rel.startswith(home + "/") for e in owners for home in EXTRA_HOMES[e])):
                problems.append(f"{rel}:{line}: {top} belongs to the extra {owners[0]!r}: import it only under "
                                f"{', '.join(EXTRA_HOMES[owners[0]])}/ or inside try/except ImportError")
        elif not guarded:
            problems.append(f"{rel}:{line}: imports {top!r}, which is neither stdlib, minify's own, nor declared "
                            f"in pyproject.toml (dependencies: {core})")
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_every_declared_dependency_is_needed():
    core, extras = declared()
    imported = {top for _, _, top, _ in all_imports()}
    assert sorted(_norm(d) for d in core) == sorted(NEEDED_FOR), "a new dependency needs a reason in NEEDED_FOR"
    for dist in core:
        assert import_names(dist) & imported, f"{dist} is declared but never imported"
    for extra, homes in EXTRA_HOMES.items():
        for dist in extras[extra]:
            if _norm(dist) in TRANSITIVE:
                owner, rel, needs = TRANSITIVE[_norm(dist)]
                assert owner == extra and needs in (ROOT / rel).read_text(), f"{dist}: is it still needed?"
                continue
            assert any(top in import_names(dist) and rel.startswith(homes)
                       for rel, _, top, _ in all_imports()), f"{dist} ({extra} extra) is never imported"
    # The tests exercise the fuzzer, so the test extra carries the fuzz extra's packages.
    assert {_norm(d) for d in extras["fuzz"]} <= {_norm(d) for d in extras["test"]}


def test_only_the_fuzz_command_loads_the_fuzz_package():
    from minifier.cli import SUBCOMMANDS

    outside = []
    for path in package_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith("minifier/fuzz/"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            outside += [f"{rel}:{node.lineno}: {n}" for n in names if n == "minifier.fuzz" or
                        n.startswith("minifier.fuzz.")]
    assert not outside, "\n".join(outside)
    assert [c for c, m in SUBCOMMANDS.items() if m.startswith("minifier.fuzz")] == ["fuzz"]


# As if not installed: `import x` raises ModuleNotFoundError, importlib.util.find_spec answers None.
_BLOCKED = """\
import importlib, pkgutil, sys
sys.modules.update(hypothesis=None, numpy=None, expecttest=None)
"""


@pytest.mark.e2e
@pytest.mark.slow
def test_everything_but_fuzz_imports_without_the_extra_or_numpy(project_env):
    """A plain install (no hypothesis) and no numpy: every module outside minifier/fuzz imports,
    and `minify fuzz` answers with one line naming the extra."""
    code = _BLOCKED + textwrap.dedent("""\
        import minifier, compiler, repro
        failed = []
        for pkg in (compiler, repro, minifier):
            for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + "."):
                if info.name.startswith("minifier.fuzz") or info.name.endswith("__main__"):
                    continue
                try:
                    importlib.import_module(info.name)
                except Exception as exc:
                    failed.append(f"{info.name}: {type(exc).__name__}: {exc}")
        print("FAILED", failed)
        from minifier.cli import main
        print("CODE", main(["fuzz", "--ops", "neg"]))
        """)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=project_env, capture_output=True, text=True,
                          timeout=300)
    assert "FAILED []" in proc.stdout, proc.stdout + proc.stderr
    assert "CODE 2" in proc.stdout, proc.stdout + proc.stderr
    lines = [l for l in proc.stderr.splitlines() if l.startswith("minify fuzz")]  # errors go to stderr
    assert len(lines) == 1 and "minify[fuzz]" in lines[0], proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
