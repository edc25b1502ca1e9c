"""Run an installed torch build with some of its Python files taken from a source checkout.

torch.compile lives in pure-Python trees (torch/_dynamo, torch/_inductor, ...). A commit's
version of those trees, extracted into a folder, is put in front of the installed build's
files by a meta-path finder that `sitecustomize` installs (PYTHONPATH names the folder that
holds it), so every process of the repro sees it, a crash repro's child too. File by file: a
module the overlay holds is loaded from it, any other from the installed build (a package from
the overlay searches the overlay first, then the build).
"""
from __future__ import annotations

import subprocess
import tarfile
import io
from pathlib import Path

TREES = ("torch/_dynamo", "torch/_inductor", "torch/_functorch", "torch/fx", "torch/_decomp", "torch/_refs",
         "torch/_prims", "torch/_prims_common", "torch/_higher_order_ops", "torch/_subclasses", "torch/_export",
         "torch/_guards.py", "torch/_logging", "torch/utils/_sympy")

SITECUSTOMIZE = '''"""minify versions: torch's Python files from MINIFY_OVERLAY before the installed build's."""
import importlib.abc
import importlib.util
import os
import sys

_ROOT = os.environ.get("MINIFY_OVERLAY")


class _Overlay(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith("torch.") or _ROOT is None:
            return None
        rel = os.path.join(_ROOT, *fullname.split("."))
        if os.path.isfile(rel + ".py"):
            return importlib.util.spec_from_file_location(fullname, rel + ".py")
        init = os.path.join(rel, "__init__.py")
        if os.path.isfile(init):
            installed = [os.path.join(p, fullname.rsplit(".", 1)[1]) for p in (path or [])]
            return importlib.util.spec_from_file_location(
                fullname, init, submodule_search_locations=[rel, *[p for p in installed if p != rel]])
        return None


if _ROOT:
    sys.meta_path.insert(0, _Overlay())
'''


def boot_folder(where: Path) -> Path:
    """A folder holding the sitecustomize.py above (put on PYTHONPATH)."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "sitecustomize.py").write_text(SITECUSTOMIZE)
    return where


def overlay_env(boot: Path, overlay: Path) -> dict:
    return {"PYTHONPATH": str(boot), "MINIFY_OVERLAY": str(overlay), "PYTHONDONTWRITEBYTECODE": "1"}


def trees_at(checkout: Path, commit: str, trees: tuple[str, ...] = TREES) -> list[str]:
    """The trees of `trees` that the commit has."""
    done = git(checkout, "ls-tree", "--name-only", commit, "--", *trees)
    return done.split()


def extract(checkout: Path, commit: str, dest: Path, trees: tuple[str, ...] = TREES) -> Path:
    """The commit's version of the trees, as files under `dest` (torch/... inside it)."""
    present = trees_at(checkout, commit, trees)
    if not present:
        raise ValueError(f"commit {commit[:12]} holds none of {', '.join(trees)}")
    data = subprocess.run(["git", "-C", str(checkout), "archive", "--format=tar", commit, "--", *present],
                          capture_output=True, check=True).stdout
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        # the "data" filter (no links out, no devices) exists from Python 3.11.4; older 3.11 extracts plainly
        tar.extractall(dest, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    return dest


def git(checkout: Path, *args: str) -> str:
    """git's output; ValueError with git's own line when it fails."""
    done = subprocess.run(["git", "-C", str(checkout), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(f"git {args[0]}: {(done.stderr.strip().splitlines() or ['failed'])[-1]}")
    return done.stdout
