import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"


def manifest() -> list[dict]:
    """The planted failing cases (corpus/manifest.json); every one ends in a verified repro."""
    return json.loads((CORPUS / "manifest.json").read_text())


def programs_manifest() -> list[dict]:
    """The foreign programs (corpus/programs/manifest.json): kind `none`, nothing fails, exit 3."""
    return json.loads((CORPUS / "programs" / "manifest.json").read_text())


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
