"""Programs run in other processes are files run by path (compiler/boot/), never code strings:
nothing in the package execs or evals a string or starts `python -c` (code minify builds as text,
FX's printed graphs and a repro folder's program, is written to a file and imported by path:
compiler/program_files.py); and the boot files import only the standard library and torch,
so what a forked child inherits is torch and nothing of minify's. Reads the source with ast."""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compiler", "repro", "minifier")
BOOT = ROOT / "compiler" / "boot"
# torch's own compiler stack: the zygote asks Triton for its cache key where Triton is installed
BOOT_MAY_IMPORT = {"torch", "triton"}
# files that may exec or eval a string: none (a program is a file: compiler/program_files.py)
EXEC_ALLOWED: set = set()
# `python -c` nowhere: what imports minify's packages runs as a module (python -m minifier.bench.planted_probe)
DASH_C_ALLOWED: set = set()
RUNS_STRINGS = ("exec", "eval")


def _files():
    return [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]


def code_string_runs(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) for each way `tree` may run a string as code: exec or eval named (called or
    passed on: `run = exec`), reached through builtins (`builtins.exec`, `getattr(builtins, "eval")`,
    `__builtins__["exec"]`), and `-c` (a program as a string on a command line). A method
    named eval (`model.eval()`) is not the builtin."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in RUNS_STRINGS:
            found.append((node.lineno, f"{node.id}(...)"))
        elif (isinstance(node, ast.Attribute) and node.attr in RUNS_STRINGS and isinstance(node.value, ast.Name)
              and node.value.id in ("builtins", "__builtins__")):
            found.append((node.lineno, f"{node.value.id}.{node.attr}"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "getattr"
              and any(isinstance(a, ast.Constant) and a.value in RUNS_STRINGS for a in node.args[1:2])):
            found.append((node.lineno, f"getattr(..., {node.args[1].value!r})"))
        elif (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant)
              and node.slice.value in RUNS_STRINGS):
            found.append((node.lineno, f"[{node.slice.value!r}]"))
        elif isinstance(node, ast.Constant) and node.value == "-c":
            found.append((node.lineno, "'-c' (a program as a string)"))
    return found


def test_no_code_string_is_executed():
    offenders = []
    for path in _files():
        rel = str(path.relative_to(ROOT))
        for line, what in code_string_runs(ast.parse(path.read_text())):
            if rel not in (DASH_C_ALLOWED if what.startswith("'-c'") else EXEC_ALLOWED):
                offenders.append(f"{rel}:{line}: {what}")
    assert not offenders, "code run from strings:\n  " + "\n  ".join(offenders)


def test_the_check_sees_each_way_to_run_a_string():
    runs = ["exec(source, namespace)", "eval(text)", "exec(compile(source, name, 'exec'), {})", "run = exec",
            "builtins.exec(source)", "getattr(builtins, 'eval')(text)", "__builtins__['exec'](source)",
            "subprocess.run([sys.executable, '-c', code])"]
    for source in runs:
        assert code_string_runs(ast.parse(source)), source
    harmless = ["model.eval()", "torch.compile(model)", "re.compile(pattern)", "compile(source, name, 'exec')",
                "subprocess.run([sys.executable, '-m', 'minifier'])", "ast.literal_eval(text)"]
    for source in harmless:
        assert not code_string_runs(ast.parse(source)), source


def _top_imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            found.add("." if node.level else (node.module or "").split(".")[0])
    return found


def test_boot_files_import_only_the_standard_library_and_torch():
    files = sorted(BOOT.glob("*.py"))
    assert {p.name for p in files} >= {"zygote.py", "host.py", "run_module.py", "prewarmed_repro.py"}
    offenders = [f"{p.relative_to(ROOT)} imports {name}" for p in files for name in sorted(_top_imports(p))
                 if name not in sys.stdlib_module_names and name not in BOOT_MAY_IMPORT]
    assert not offenders, "boot files importing more than the standard library and torch:\n  " + "\n  ".join(offenders)


def test_boot_folder_holds_only_boot_files():
    """Running a file puts its folder first on sys.path: nothing else may sit there to shadow a module."""
    assert not [p for p in BOOT.iterdir() if p.is_dir() and p.name != "__pycache__"]
    assert all(p.suffix == ".py" for p in BOOT.iterdir() if p.is_file())
