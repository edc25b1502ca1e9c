"""repro.json: what a repro folder holds, in machine-readable form.

repro.py is for people; `minify replay`, `minify test-from` and the issue writer read this
file instead of parsing Python. It is written by repro/writer.py with every repro.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

MANIFEST = "repro.json"
REPRO = "repro.py"
FORMAT = 1


class ReproFolderError(Exception):
    """A folder that is not a usable repro folder: reported in one line."""


def write_manifest(folder: Path, data: dict) -> Path:
    path = folder / MANIFEST
    path.write_text(json.dumps({"format": FORMAT, **data}, indent=1, default=str))
    return path


def read_manifest(folder: Path) -> dict:
    """The manifest of a repro folder, or ReproFolderError saying what is wrong."""
    if not folder.exists():
        raise ReproFolderError(f"no such folder: {folder}")
    if not folder.is_dir():
        raise ReproFolderError(f"not a folder: {folder} (give the folder that holds repro.py)")
    for name in (REPRO, MANIFEST):
        if not (folder / name).is_file():
            raise ReproFolderError(f"{folder} holds no {name}: not a repro folder written by minify")
    try:
        data = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError) as exc:
        raise ReproFolderError(f"{folder / MANIFEST}: unreadable ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ReproFolderError(f"{folder / MANIFEST}: not a manifest this version of minify can read")
    return data


def repro_folders(root: Path) -> list[Path]:
    """`root` if it holds a repro, then its `bug-N` sub-folders in order (one per distinct bug)."""
    found = [root] if (root / MANIFEST).is_file() else []
    subs = [p for p in root.glob("bug-*") if (p / MANIFEST).is_file() and re.fullmatch(r"bug-\d+", p.name)]
    return found + sorted(subs, key=lambda p: int(p.name.split("-")[1]))
