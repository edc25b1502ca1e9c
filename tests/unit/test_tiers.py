"""Every test file is in a tier: a folder under tests/ by which conftest.py marks its tests (unit,
integration, e2e; the default run leaves e2e out). A file in no tier would run unmarked in every
run, and a minify command run outside e2e would slow the default run down. Reads the test files
with ast; imports none of them."""
import ast
from pathlib import Path

from conftest import TESTS, TIERS, tier_of

# What runs the minify command as a user would: the conftest helper, or `python -m minifier`.
COMMAND_CALLS = ("run_minify(", '"-m", "minifier"')


def _test_files() -> list[Path]:
    return sorted({*TESTS.rglob("test_*.py"), *TESTS.rglob("*_test.py")})


def _marked_e2e(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Attribute) and n.attr == "e2e" for n in ast.walk(node))


def _unmarked_command_runs(path: Path) -> list[str]:
    """The tests of a file that run the minify command (in their body, in one of the file's
    functions they call, or in a fixture of the file they take) without an e2e mark on the test
    or on the module."""
    source = path.read_text()
    tree = ast.parse(source)
    if any(isinstance(n, ast.Assign) and "pytestmark" in ast.unparse(n) and _marked_e2e(n.value) for n in tree.body):
        return []
    functions = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}

    def runs_command(node: ast.FunctionDef, seen: set[str]) -> bool:
        if any(call in (ast.get_source_segment(source, node) or "") for call in COMMAND_CALLS):
            return True
        used = {n.func.id for n in ast.walk(node) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
        used |= {a.arg for a in node.args.args}  # the fixtures it takes
        return any(runs_command(functions[name], seen | {name}) for name in (used & set(functions)) - seen)

    return [f"{path.name}::{name}" for name, node in functions.items()
            if name.startswith("test") and not any(_marked_e2e(d) for d in node.decorator_list)
            and runs_command(node, {name})]


def test_every_test_file_is_in_a_tier_folder():
    files = _test_files()
    stray = [str(p.relative_to(TESTS)) for p in files if tier_of(p) is None]
    assert files and not stray, f"move each into one of tests/{{{','.join(TIERS)}}}/: {stray}"


def test_no_two_test_files_share_a_name():
    """Test folders have no __init__.py: pytest imports each file by its base name, and a second
    file of that name in another tier stops the collection of a run over every tier (CI's)."""
    names = [p.name for p in _test_files()]
    assert sorted(n for n in set(names) if names.count(n) > 1) == []


def test_one_conftest_serves_every_tier():
    """The test files import conftest's helpers by name: a second conftest.py would shadow them."""
    assert sorted(TESTS.rglob("conftest.py")) == [TESTS / "conftest.py"]


def test_a_test_is_marked_by_its_folder(request):
    assert request.node.get_closest_marker("unit") and not request.node.get_closest_marker("e2e")


def test_no_test_outside_e2e_runs_the_minify_command_unmarked():
    found = [name for path in _test_files() if tier_of(path) in TIERS[:-1] for name in _unmarked_command_runs(path)]
    assert not found, f"mark these @pytest.mark.e2e, or move their files to tests/e2e/: {found}"


def test_unit_tests_start_no_process():
    """unit: no subprocess and no compile; a file importing subprocess or multiprocessing is not."""
    found = []
    for path in (p for p in _test_files() if tier_of(p) == "unit"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            found += [f"{path.name}: {n}" for n in names if n.split(".")[0] in ("subprocess", "multiprocessing")]
    assert not found, f"move these to tests/integration/: {found}"
