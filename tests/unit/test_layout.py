"""The house stays this way: imports run one way (minifier -> repro -> compiler) with no circle
between files, minifier/'s top level holds only the entry points, and no module or function grows
past what a reader takes in at once. Reads the source with ast; imports nothing it checks."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compiler", "repro", "minifier")
LAYER = {name: depth for depth, name in enumerate(PACKAGES)}  # a package may import only lower depths
MAX_TOP_LEVEL_MODULES = 12
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 9


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> dict[str, Path]:
    """Every module of the three packages, by dotted name."""
    return {_module_name(p): p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))}


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute dotted name an ImportFrom names (relative imports resolved against the file)."""
    if not node.level:
        return node.module or ""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for _ in range(node.level - 1):
        package = package.rpartition(".")[0]
    return f"{package}.{node.module}" if node.module else package


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The project modules this file imports, at module level and inside functions alike."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path, node)
            names = [f"{base}.{alias.name}" for alias in node.names] + [base]
        else:
            continue
        for name in names:
            while name and name not in known:  # `from pkg import mod` names a module; `import a.b.c` names its file
                name = name.rpartition(".")[0]
            if name and name != module:
                found.add(name)
    return found


def _graph() -> dict[str, set[str]]:
    sources = _sources()
    known = set(sources)
    return {module: _imports(module, path, known) for module, path in sources.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one file (Tarjan), each a circle of imports."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in sorted(graph.get(node, ())):
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def _report(title: str, offenders: list[str]) -> str:
    message = f"{title}:\n  " + "\n  ".join(offenders)
    if offenders:
        print(message)
    return message


def test_no_import_circle_between_files():
    offenders = [" <-> ".join(c) for c in _cycles(_graph())]
    assert not offenders, _report("import circles", offenders)


def test_no_upward_import():
    offenders = []
    for module, imported in sorted(_graph().items()):
        layer = LAYER[module.split(".")[0]]
        for name in sorted(imported):
            if LAYER[name.split(".")[0]] > layer:
                offenders.append(f"{module} imports {name}")
    assert not offenders, _report("upward imports", offenders)


def test_minifier_top_level_holds_only_the_entry_points():
    modules = sorted(p.name for p in (ROOT / "minifier").glob("*.py"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, _report(
        f"more than {MAX_TOP_LEVEL_MODULES} modules directly in minifier/", modules)


def test_no_module_over_the_line_limit():
    offenders = []
    for module, path in sorted(_sources().items()):
        lines = len(path.read_text().splitlines())
        if lines > MAX_MODULE_LINES:
            offenders.append(f"{path.relative_to(ROOT)}: {lines} lines")
    assert not offenders, _report(f"modules over {MAX_MODULE_LINES} lines", offenders)


def _functions(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def _parameter_count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    args = fn.args
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    names += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    return len([n for n in names if n not in ("self", "cls")])


def test_no_function_over_the_line_limit():
    offenders = []
    for module, path in sorted(_sources().items()):
        for fn in _functions(path):
            lines = fn.end_lineno - fn.lineno + 1
            if lines > MAX_FUNCTION_LINES:
                offenders.append(f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name}: {lines} lines")
    assert not offenders, _report(f"functions over {MAX_FUNCTION_LINES} lines", offenders)


def test_no_function_with_ten_parameters():
    offenders = []
    for module, path in sorted(_sources().items()):
        for fn in _functions(path):
            count = _parameter_count(fn)
            if count > MAX_PARAMETERS:
                offenders.append(f"{path.relative_to(ROOT)}:{fn.lineno} {fn.name}: {count} parameters")
    assert not offenders, _report(f"functions with more than {MAX_PARAMETERS} parameters", offenders)
