"""A bytecode cache for the run's own processes, where Python keeps none beside the sources.

Every process of a run (the capture, the workers, blame's probes, the verifier) imports torch and
Inductor: about 2,300 modules. Where the installed packages carry no compiled bytecode and Python
may not write any beside them (PYTHONDONTWRITEBYTECODE, as container images often set; a read-only
site-packages; packages installed without bytecode, as uv installs them), each process compiles
every one from source again: seconds of each process's start, where a capture alone took
about twice as long as with bytecode.

There a run points PYTHONPYCACHEPREFIX at a folder of its work folder, so that what one process
compiled the others read, and compiles torch and what it imports on the spare cores at the start,
beside the capture. Where bytecode is cached beside the sources (or Python may write it there)
nothing changes: with a prefix set, Python would ignore that cache.
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
import sys
import sysconfig
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import metadata, util
from pathlib import Path

FOLDER = "pycache"  # OUT/work/pycache, removed when the run ends
# Packages torch imports when they are there, beside its declared requirements.
OPTIONAL = ("numpy",)
# Parts of the standard library no torch process imports.
STDLIB_SKIP = {"test", "idlelib", "tkinter", "lib2to3", "turtledemo", "ensurepip", "site-packages", "dist-packages",
               "pydoc_data", "distutils", "__pycache__"}


def uncached() -> bool:
    """True where torch's modules have no bytecode beside them and Python will not write it there;
    False where the user set a prefix of their own."""
    if sys.pycache_prefix is not None or os.environ.get("PYTHONPYCACHEPREFIX"):
        return False
    spec = util.find_spec("torch")  # finds the package without importing it
    if spec is None or not spec.origin:
        return False
    cached = Path(util.cache_from_source(spec.origin))
    if cached.exists():
        return False
    writable = os.access(cached.parent if cached.parent.exists() else cached.parent.parent, os.W_OK)
    return sys.flags.dont_write_bytecode or not writable


@dataclass
class BytecodePrefix:
    """The prefix a run set, the process compiling into it, and what it replaced."""
    folder: Path
    compiling: subprocess.Popen | None
    saved: dict = field(default_factory=dict)  # environment variables before, None where unset
    saved_sys: tuple = (None, False)

    def close(self) -> None:
        """Stop compiling, put this process's settings back (tests run several minifies in one
        process) and remove the folder."""
        if self.compiling is not None:  # its pool's processes too, or they would write on
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.compiling.pid, signal.SIGKILL)
            self.compiling.wait()
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        sys.pycache_prefix, sys.dont_write_bytecode = self.saved_sys
        shutil.rmtree(self.folder, ignore_errors=True)


def use_prefix(work: Path, cores: int, forked: bool) -> BytecodePrefix | None:
    """Where `uncached()`: set the prefix for this process and every process it starts, and start
    compiling into it on the spare cores. Not on fewer than 4 cores where a zygote forks the
    workers: there two processes import torch, and on 2 cores the prefix measured no faster (the
    spare cores it compiles on are not spare there) and the compile beside the capture slower."""
    if not uncached() or (cores < 4 and forked):
        return None
    folder = work / FOLDER
    saved = {name: os.environ.get(name) for name in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    prefix = BytecodePrefix(folder, None, saved, (sys.pycache_prefix, sys.dont_write_bytecode))
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # writes go to the prefix, in the output folder
    sys.pycache_prefix, sys.dont_write_bytecode = str(folder), False
    if cores >= 4:
        prefix.compiling = subprocess.Popen(
            [sys.executable, "-m", "minifier.workers.bytecode", str(cores - 2)], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=Path(__file__).resolve().parents[2],
            start_new_session=True)
    return prefix


def requirements(name: str, seen: set[str]) -> list[metadata.Distribution]:
    """The installed distribution `name` and those it requires, transitively (extras left out)."""
    key = name.lower().replace("_", "-")
    if key in seen:
        return []
    seen.add(key)
    try:
        dist = metadata.distribution(name)
    except metadata.PackageNotFoundError:
        return []
    found = [dist]
    for req in dist.requires or []:
        if "extra ==" in req:
            continue
        match = re.match(r"[A-Za-z0-9._-]+", req)
        if match:
            found += requirements(match.group(0), seen)
    return found


def stdlib_sources() -> list[str]:
    root = sysconfig.get_paths()["stdlib"]
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in STDLIB_SKIP]
        found += [os.path.join(folder, f) for f in files if f.endswith(".py")]
    return found


def sources() -> list[str]:
    """What a torch process imports, in about the order it does: the standard library, torch, the
    distributions torch requires and the optional ones, then this project."""
    seen: set[str] = set()
    dists = requirements("torch", seen) + [d for name in OPTIONAL for d in requirements(name, seen)]
    found = stdlib_sources()
    for dist in dists:
        found += [str(dist.locate_file(f)) for f in dist.files or [] if f.suffix == ".py"]
    project = Path(__file__).resolve().parents[2]
    found += [str(p) for pkg in ("compiler", "repro", "minifier") for p in (project / pkg).rglob("*.py")]
    return found


def compile_one(path: str) -> None:
    """Compile one source unless a process of the run already has."""
    import py_compile

    if not os.path.exists(util.cache_from_source(path)):
        py_compile.compile(path, doraise=False, quiet=2)


def main() -> None:
    """python -m minifier.workers.bytecode JOBS: compile `sources()` into PYTHONPYCACHEPREFIX."""
    jobs = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
        list(pool.map(compile_one, sources(), chunksize=32))


if __name__ == "__main__":
    main()
