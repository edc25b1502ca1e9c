"""Code that minify builds as text, run as a real file: written out, then imported by path.

A candidate graph (FX's printed code, compiler/graph_code.py) and the program a repro folder's
manifest describes (repro/runner.py) are programs, not strings to exec: each is written to a
`.py` file and loaded with importlib, so tracebacks, linecache, inspect, coverage and linters
see a file. The file is named by its content's hash: a graph checked again (by another worker,
or after the parent validated it) is read, not written again.

Where: the run's own folder (OUT/work/programs), which a run names for all its processes in
MINIFY_PROGRAMS; a worker of a pool outside a run, its pool's log folder (minifier/workers/worker.py);
any other process outside a run (`minify replay`'s oracle, a test) a folder of its own in the
temporary directory, removed when it exits. Never the user's folders.

Each load is a fresh module (as each exec was a fresh namespace) under a name of its own, and
is not entered in sys.modules: a worker that loads thousands of candidates keeps no module it
no longer uses.
"""
from __future__ import annotations

import atexit
import hashlib
import itertools
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from importlib.machinery import SourceFileLoader
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType

FOLDER_ENV = "MINIFY_PROGRAMS"  # the run's folder for these files, for every process it starts
RUN_FOLDER = "programs"  # OUT/work/programs
_numbers = itertools.count()
_private: dict[int, Path] = {}  # pid -> this process's own folder (a forked child makes its own)
_lock = threading.Lock()


class _SourceOnly(SourceFileLoader):
    """Compiles the file on each load, no bytecode written beside it or read back: every file
    is loaded about once, and __pycache__ would double the files (SourceLoader.get_code reads
    and writes bytecode only when path_stats answers)."""

    def path_stats(self, path):
        raise OSError("programs keep no bytecode")


@dataclass
class RunPrograms:
    """A run's programs folder, named in MINIFY_PROGRAMS for this process and all it starts;
    `close` puts back what was there (tests run several minifies in one process)."""
    folder: Path
    saved: str | None

    @staticmethod
    def name(work: Path) -> "RunPrograms":
        named = RunPrograms(work / RUN_FOLDER, os.environ.get(FOLDER_ENV))
        os.environ[FOLDER_ENV] = str(named.folder)
        return named

    def close(self) -> None:
        if self.saved is None:
            os.environ.pop(FOLDER_ENV, None)
        else:
            os.environ[FOLDER_ENV] = self.saved


def programs_folder() -> Path:
    """The run's folder (MINIFY_PROGRAMS), else this process's own, made on first use."""
    named = os.environ.get(FOLDER_ENV)
    if named:
        return Path(named)
    pid = os.getpid()
    with _lock:
        if pid not in _private:
            _private[pid] = Path(tempfile.mkdtemp(prefix="minify-programs-"))
            atexit.register(_remove_private, pid)
        return _private[pid]


def _remove_private(pid: int) -> None:
    if os.getpid() == pid:  # a forked child runs its parent's atexit handlers too
        shutil.rmtree(_private.pop(pid), ignore_errors=True)


def program_file(source: str, kind: str, folder: Path | None = None) -> Path:
    """`folder/KIND_HASH.py` holding `source` (written whole, atomically, where it was not yet)."""
    folder = programs_folder() if folder is None else folder
    path = folder / f"{kind}_{hashlib.sha256(source.encode()).hexdigest()[:16]}.py"
    if not path.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        partial = folder / f".{path.name}.{os.getpid()}.{threading.get_ident()}"
        partial.write_text(source, encoding="utf-8")
        os.replace(partial, path)  # other processes read it whole or not at all
    return path


def load_file(path: Path, kind: str = "program") -> ModuleType:
    """Run the file at `path` as a new module of its own (not entered in sys.modules)."""
    name = f"minify_{kind}_{next(_numbers)}"
    loader = _SourceOnly(name, str(path))
    module = module_from_spec(spec_from_file_location(name, path, loader=loader))
    loader.exec_module(module)
    return module


def load_program(source: str, kind: str, folder: Path | None = None) -> ModuleType:
    """Write `source` to a file (program_file) and run it as a new module (load_file)."""
    return load_file(program_file(source, kind, folder), kind)
