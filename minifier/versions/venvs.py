"""One virtual environment per torch version, created once under a user cache folder and reused.

`~/.cache/minify/venvs/torch-2.14.1/` (`$XDG_CACHE_HOME`, or `MINIFY_VENV_CACHE` for the folder
itself). A venv is built in a `.partial-*` folder and renamed only once torch is in it, so an
interrupted install never leaves a venv that looks usable. The Python running minify is used
as it is when its own torch answers the version asked for (nothing to install).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from compiler.boot import TORCH_VERSION
from minifier.versions.specs import matches, requirement, version_key

INSTALL_TIMEOUT = 3600.0  # seconds: a CUDA build is several GB
_INSTALLING = threading.Lock()  # one pip at a time: parallel installs share pip's cache and the disk


@dataclass
class Python:
    """An interpreter that has a torch."""
    executable: Path
    torch: str  # its torch's version, e.g. 2.14.1+cpu
    where: str  # "this Python" or the venv's folder


class CannotInstall(Exception):
    """The version could not be installed: the one line says why."""


def cache_root() -> Path:
    if os.environ.get("MINIFY_VENV_CACHE"):
        return Path(os.environ["MINIFY_VENV_CACHE"]).expanduser()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "minify" / "venvs"


def torch_version(python: Path) -> str | None:
    """The torch installed for `python` (its metadata: no `import torch`), or None."""
    try:
        done = subprocess.run([str(python), TORCH_VERSION],
                              capture_output=True, text=True, timeout=60, env=clean_env())
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def clean_env() -> dict:
    """The environment a version's Python runs in: nothing of this Python's path, caches off (a
    compile cached by one build, or by one overlay, must never serve another)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    env.update(TORCHINDUCTOR_FX_GRAPH_CACHE="0", TORCHINDUCTOR_AUTOGRAD_CACHE="0", PYTHONWARNINGS="ignore")
    return env


def cached(spec: str, root: Path | None = None) -> Python | None:
    """The newest cached venv whose torch answers `spec`, or None."""
    root = root or cache_root()
    found = []
    for folder in root.glob("torch-*") if root.is_dir() else []:
        version = folder.name[len("torch-"):]
        python = folder / "bin" / "python"
        if matches(spec, version) and python.exists():
            found.append((version_key(version), version, python))
    for _, version, python in sorted(found, reverse=True):
        if torch_version(python) == version:
            return Python(python, version, str(python.parent.parent))
    return None


def this_python(spec: str) -> Python | None:
    from importlib import metadata

    try:
        version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None
    return Python(Path(sys.executable), version, "this Python") if matches(spec, version) else None


def python_for(spec: str, index_url: str | None = None, installer: str = "pip", say=lambda s: None) -> Python:
    """This Python, a cached venv, or a new one; CannotInstall when pip (or uv) cannot."""
    found = this_python(spec) or cached(spec)
    if found:
        return found
    with _INSTALLING:
        return cached(spec) or install(spec, index_url, installer, say)


def install(spec: str, index_url: str | None, installer: str, say) -> Python:
    root = cache_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CannotInstall(f"cannot create the venv cache {root}: {exc.strerror or exc}") from None
    partial = root / f".partial-{spec}-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    say(f"torch {spec}: installing into a new venv under {root} ({installer})")
    try:
        _run(_create_command(partial, installer), "create the venv")
        python = partial / "bin" / "python"
        _run(_install_command(python, spec, index_url, installer), f"install {requirement(spec)}")
        version = torch_version(python)
        if version is None:
            raise CannotInstall(f"torch {spec}: installed, but its Python shows no torch")
        final = root / f"torch-{version}"
        if final.exists():  # another run made it meanwhile
            shutil.rmtree(partial, ignore_errors=True)
        else:
            partial.rename(final)
        return Python(final / "bin" / "python", version, str(final))
    finally:
        shutil.rmtree(partial, ignore_errors=True)


def _create_command(folder: Path, installer: str) -> list[str]:
    if installer == "uv":
        return ["uv", "venv", "-q", "--python", sys.executable, str(folder)]
    return [getattr(sys, "_base_executable", sys.executable), "-m", "venv", str(folder)]


def _install_command(python: Path, spec: str, index_url: str | None, installer: str) -> list[str]:
    index = ["--index-url", index_url] if index_url else []
    if installer == "uv":
        return ["uv", "pip", "install", "-q", "--python", str(python), *index, requirement(spec)]
    return [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *index, requirement(spec)]


def _run(command: list[str], what: str) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, env=clean_env(),
                              stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise CannotInstall(f"cannot {what}: {command[0]} not found") from None
    except subprocess.TimeoutExpired:
        raise CannotInstall(f"cannot {what}: not done within {INSTALL_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        raise CannotInstall(f"cannot {what}: {pip_reason(done.stderr or done.stdout)}")


def pip_reason(text: str) -> str:
    """pip's (or uv's) own reason in one line: its ERROR line, not its warnings."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith(("ERROR", "error", "×"))]
    reason = (errors or lines or ["no output"])[0]
    return reason.removeprefix("ERROR: ")[:300]
