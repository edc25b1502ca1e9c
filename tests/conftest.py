import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"

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


def run_minify(args: list[str], cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["COLUMNS"] = "200"
    return subprocess.run([sys.executable, "-m", "minifier", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def project_env():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env
