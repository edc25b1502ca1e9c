"""Programs run in other processes are files run by path (compiler/boot/), never code strings:
nothing in the package execs or evals a string or starts `python -c`, except the few places
named below, each for a reason; and the boot files import only the standard library and torch,
so what a forked child inherits is torch and nothing of minify's. Reads the source with ast."""
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compiler", "repro", "minifier")
BOOT = ROOT / "compiler" / "boot"
# torch's own compiler stack: the zygote asks Triton for its cache key where Triton is installed
BOOT_MAY_IMPORT = {"torch", "triton"}
# exec of text that is data, not a program of ours: code printed by torch.fx and read back, and the
# sources a repro folder's manifest carries (repro/runner.py runs them as repro.py would)
EXEC_ALLOWED = {"compiler/graph_code.py", "repro/runner.py"}
# `python -c` nowhere: what imports minify's packages runs as a module (python -m minifier.bench.planted_probe)
DASH_C_ALLOWED: set = set()


def _files():
    return [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]


def test_no_code_string_is_executed():
    offenders = []
    for path in _files():
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("exec", "eval")
                    and rel not in EXEC_ALLOWED):
                offenders.append(f"{rel}:{node.lineno}: {node.func.id}(...)")
            if isinstance(node, ast.Constant) and node.value == "-c" and rel not in DASH_C_ALLOWED:
                offenders.append(f"{rel}:{node.lineno}: '-c' (a program as a string)")
    assert not offenders, "code run from strings:\n  " + "\n  ".join(offenders)


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
