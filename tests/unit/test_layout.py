"""The house stays this way: imports run one way (minifier -> repro -> compiler) with no circle
between files, minifier/'s folders form a one-way stack (FOLDER_ORDER) that each folder's
`May import:` line states, minifier/'s top level holds only the entry points, and no module or
function grows past what a reader takes in at once. Reads the source with ast; imports nothing it checks."""
import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("compiler", "repro", "minifier")
LAYER = {name: depth for depth, name in enumerate(PACKAGES)}  # a package may import only lower depths
MAX_TOP_LEVEL_MODULES = 12
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60
MAX_PARAMETERS = 9

# minifier/'s folders, bottom to top, a floor a tuple: a folder imports only folders on floors below
# its own, never one beside or above it. exit_codes and phases, top-level modules that import nothing
# of minifier's, sit at the bottom for every floor to use; every other top-level module of minifier/
# (cli, bisect, interrupts, ...) is the top: it may import any folder, and no folder imports it.
FOLDER_ORDER = [
    ("exit_codes", "phases"),
    ("graph",),  # FX graph helpers: edits, input transforms, observed and stored nodes
    ("workers",),  # the zygote, the pool, the worker loop and its jobs, the Evaluator that asks them
    ("distributed",),  # a torchrun job: its command line, its ranks started and ended, which rank failed
    ("reduce", "capture", "blame"),  # ddmin and its passes; the capture process; blame's experiments
    ("localize", "start"),  # which graph and node fail; a run's options, output folder, launch, session
    ("search",),  # the per-graph loop: confirm, stage, divergence, reduce, mask, again
    ("report",),  # what a person reads
    ("emit", "program"),  # repro folders written and verified; failures of several graphs together
    ("run",),  # the pipeline
    ("fuzz", "bench", "versions", "batch"),  # commands of their own
]
TOP = len(FOLDER_ORDER)  # the floor of minifier's other top-level modules


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


@functools.cache
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


def _floors() -> dict[str, int]:
    return {name: floor for floor, names in enumerate(FOLDER_ORDER) for name in names}


def _unit(module: str) -> str:
    """The folder (or bottom module) of minifier/ a module belongs to; '' for the top."""
    parts = module.split(".")
    if len(parts) < 2 or parts[0] != "minifier":
        return ""
    return parts[1] if parts[1] in _floors() or (ROOT / "minifier" / parts[1]).is_dir() else ""


def _unit_imports() -> dict[str, set[str]]:
    """minifier's units (folders, the bottom modules, '' for the top) and the other units their files import."""
    found: dict[str, set[str]] = {}
    for module, imported in _graph().items():
        if module.split(".")[0] != "minifier":
            continue
        unit = _unit(module)
        found.setdefault(unit, set()).update(
            _unit(name) for name in imported if name.split(".")[0] == "minifier" and _unit(name) != unit)
    return found


def test_every_minifier_folder_has_a_floor():
    folders = {p.parent.name for p in (ROOT / "minifier").glob("*/__init__.py")}
    placed = set(_floors())
    offenders = [f"minifier/{f}/ is on no floor of FOLDER_ORDER" for f in sorted(folders - placed)]
    offenders += [f"FOLDER_ORDER names {n}, which is no folder or module of minifier/" for n in sorted(placed)
                  if not (ROOT / "minifier" / n / "__init__.py").exists() and not (ROOT / "minifier" / f"{n}.py").exists()]
    assert not offenders, _report("folders and FOLDER_ORDER disagree", offenders)


def test_no_import_runs_up_the_folder_order():
    floors = _floors()
    offenders = []
    for module, imported in sorted(_graph().items()):
        if module.split(".")[0] != "minifier":
            continue
        unit = _unit(module)
        floor = floors.get(unit, TOP)
        for name in sorted(imported):
            other = _unit(name)
            if name.split(".")[0] != "minifier" or other == unit or floor == TOP:
                continue
            if floors.get(other, TOP) >= floor:
                offenders.append(f"{module} ({unit or 'top'}) imports {name} ({other or 'top'})")
    assert not offenders, _report("imports that run up (or across) the folder order", offenders)


def _may_import(init: Path) -> set[str] | None:
    """The units a folder's `May import:` line names (`nothing` for none); None without the line."""
    doc = ast.get_docstring(ast.parse(init.read_text())) or ""
    lines = [line for line in doc.splitlines() if line.startswith("May import:")]
    if len(lines) != 1:
        return None
    names = lines[0].removeprefix("May import:").strip()
    return set() if names == "nothing" else {n.strip() for n in names.split(",")}


def test_may_import_lines_state_what_each_folder_imports():
    actual = _unit_imports()
    offenders = []
    for folder in sorted(_floors()):
        init = ROOT / "minifier" / folder / "__init__.py"
        if not init.exists():
            continue
        stated = _may_import(init)
        if stated is None:
            offenders.append(f"minifier/{folder}/__init__.py: no single 'May import: a, b' line in its docstring")
            continue
        imports = actual.get(folder, set())
        if stated != imports:
            offenders.append(f"minifier/{folder}: says May import: {', '.join(sorted(stated)) or 'nothing'}; "
                             f"imports {', '.join(sorted(imports)) or 'nothing'}")
    assert not offenders, _report("May import lines that are not the truth", offenders)
