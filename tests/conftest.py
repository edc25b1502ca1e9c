import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"
TESTS = ROOT / "tests"

# The tiers, fastest first; a test's tier is the folder its file is in (README, "Tests"). unit:
# no subprocess, no compile. integration: real compiles, workers, scripts in subprocesses, but not
# the minify command. e2e: the minify command as a user runs it (a subprocess of the CLI, a whole
# run). A test marked `e2e` is e2e wherever its file is; `slow` says how long a test takes, not
# what it does. The default run leaves out e2e and slow (pyproject.toml's addopts); CI runs all.
TIERS = ("unit", "integration", "e2e")
# Test modules import helpers from one another (test_blame's models, test_repro_inputs' writer):
# whichever folder each is in, a plain `from test_x import y` finds it.
sys.path[:0] = [str(TESTS / tier) for tier in TIERS]

# Tests that compile in their own process keep out of the per-user FX graph and AOTAutograd
# caches, as the tool's processes do (compiler/settings.py): a graph compiled elsewhere with a
# bug planted must not be served here, and nothing compiled here is left for later runs.
os.environ.setdefault("TORCHINDUCTOR_FX_GRAPH_CACHE", "0")
os.environ.setdefault("TORCHINDUCTOR_AUTOGRAD_CACHE", "0")


def manifest() -> list[dict]:
    """The planted failing cases (corpus/manifest.json); every one ends in a verified repro."""
    return json.loads((CORPUS / "manifest.json").read_text())


def programs_manifest() -> list[dict]:
    """Every entry of corpus/programs/manifest.json: the foreign programs (kind `none`) and the
    planted program shapes (a plant, a failing graph, exit 0 with a verified repro)."""
    return json.loads((CORPUS / "programs" / "manifest.json").read_text())


def foreign_programs() -> list[dict]:
    """The foreign programs: kind `none`, nothing fails, exit 3."""
    return [c for c in programs_manifest() if c["kind"] == "none"]


def planted_programs() -> list[dict]:
    """The program shapes with a planted bug (issue 22, item 4): answered like manifest.json's cases."""
    return [c for c in programs_manifest() if c["kind"] != "none"]


def tier_of(path: Path) -> str | None:
    """The tier of a test file: the tier folder directly under tests/ holding it, else None."""
    path = Path(path).resolve()
    if not path.is_relative_to(TESTS):
        return None
    parts = path.relative_to(TESTS).parts
    return parts[0] if len(parts) == 2 and parts[0] in TIERS else None


@pytest.hookimpl(tryfirst=True)  # before -m selects by the markers added here
def pytest_collection_modifyitems(config, items):
    """Mark each test with its tier; run the folders fastest first (each file's tests together)."""
    folder = {item.nodeid: tier_of(item.path) for item in items}
    for item in items:
        tier = "e2e" if item.get_closest_marker("e2e") else folder[item.nodeid]
        if tier:  # a file in no tier folder is left unmarked: tests/unit/test_tiers.py fails on it
            item.add_marker(tier)
    items.sort(key=lambda item: TIERS.index(folder[item.nodeid]) if folder[item.nodeid] else -1)


def run_minify(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "200"
    return subprocess.run([sys.executable, "-m", "minifier", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


def run_repro_elsewhere(repro: Path, folder: Path, dynamo: bool = True) -> subprocess.CompletedProcess:
    """repro.py as a user runs it: a fresh isolated python in another folder (`dynamo`: False with
    TORCHDYNAMO_DISABLE=1, the control that must pass)."""
    folder.mkdir(exist_ok=True)
    env = {**os.environ, **({} if dynamo else {"TORCHDYNAMO_DISABLE": "1"})}
    return subprocess.run([sys.executable, "-I", str(repro)], cwd=folder, capture_output=True, text=True,
                          timeout=600, env=env)


@pytest.fixture
def project_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env
