"""The output folder is minify's alone: what it may replace, what it must leave, one run at a time.

OUT/.minify-files.json (the manifest) names the folder's top-level entries that minify runs
wrote, the program of the last run and its command. The next run replaces only those; any other
entry is the user's: the folder is refused (exit 2, naming one such file) unless --force, and
even then nothing of the user's is deleted or overwritten. A run of another program is moved
into OUT/previous-<time>/ (with --force) so that the folder never mixes two runs' results.

OUT/.minify-lock is held (fcntl.flock) for the run's life and released by the kernel when the
process ends however it ends; a second run into the same folder is refused with the first's
pid and command. Nothing here imports torch.
"""
from __future__ import annotations

import fnmatch
import fcntl
import json
import os
import shutil
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_CANNOT_WRITE

MANIFEST = ".minify-files.json"
LOCK = ".minify-lock"
RUN_FILE = "run.json"  # OUT/work/run.json: which program the run in this folder is of
# What a run may write at the top of its output folder (anything else there is the user's).
RUN_OUTPUTS = ("work", "repro.py", "repro.json", "report.json", "report.html", "issue.md", "blame.json", "inputs.pt")
RUN_PATTERNS = ("bug-*",)
OURS_ALWAYS = (MANIFEST, LOCK)  # the folder's own bookkeeping
PREVIOUS = "previous-*"  # earlier runs of other programs, moved aside by --force


class FolderError(Exception):
    """The output folder cannot be used: one line, and the exit status to end with."""

    def __init__(self, message: str, code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.code = code


def cannot_write(path: Path, exc: OSError) -> FolderError:
    return FolderError(f"cannot write to the output folder {path}: {exc.strerror or exc}", EXIT_CANNOT_WRITE)


def _may_write(name: str) -> bool:
    return name in RUN_OUTPUTS or any(fnmatch.fnmatch(name, p) for p in RUN_PATTERNS)


@dataclass
class Previous:
    """What the folder holds before this run: minify's entries, the user's, and whose run it was."""

    ours: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)
    program: str | None = None  # the program of the run in it ("": a run that does not say)


def _read_json(path: Path) -> dict:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def survey(out: Path) -> Previous:
    """Sort the folder's top-level entries into minify's and the user's. Without a manifest (a
    folder of an older minify), the known outputs are minify's only if work/run.json says a
    run was there."""
    names = sorted(p.name for p in out.iterdir()) if out.is_dir() else []
    manifest = _read_json(out / MANIFEST)
    legacy = _read_json(out / "work" / RUN_FILE)
    if manifest:
        listed = set(manifest.get("entries") or [])
        patterns = list(manifest.get("patterns") or [])

        def ours(name: str) -> bool:
            return name in listed or any(fnmatch.fnmatch(name, p) for p in patterns)
    else:
        def ours(name: str) -> bool:
            return bool(legacy) and _may_write(name)
    mine = [n for n in names if n in OURS_ALWAYS or n.startswith(".minify-") or fnmatch.fnmatch(n, PREVIOUS)
            and n in (manifest.get("entries") or []) or ours(n)]
    program = manifest.get("program") or legacy.get("script") or _read_json(out / "report.json").get("script")
    results = [n for n in mine if n not in OURS_ALWAYS and not n.startswith(".minify-")]
    return Previous(mine, [n for n in names if n not in mine], (program or "") if results else None)


def example_file(out: Path, name: str) -> Path:
    """A file of the user's entry `name` to name in the one line (its first file, for a folder)."""
    path = out / name
    if path.is_dir() and not path.is_symlink():
        for root, dirs, files in os.walk(path):
            dirs.sort()
            if files:
                return Path(root) / sorted(files)[0]
    return path


def check_foreign(out: Path, previous: Previous, force: bool) -> None:
    """Refuse a folder holding the user's files (unless --force); even with --force, refuse one
    whose user file has a name a run writes (it would be overwritten)."""
    if not previous.foreign:
        return
    clash = [n for n in previous.foreign if _may_write(n) or n in OURS_ALWAYS]
    if clash:
        raise FolderError(f"output folder {out} holds files that no minify run wrote, where a run writes its own "
                          f"(e.g. {example_file(out, clash[0])}); choose another with -o (--force never "
                          f"overwrites them)")
    if not force:
        raise FolderError(f"output folder {out} holds files that no minify run wrote (e.g. "
                          f"{example_file(out, previous.foreign[0])}); choose another with -o, or pass --force to "
                          f"write beside them")


class Lock:
    """OUT/.minify-lock, held with flock for the run's life; the kernel lets go when the process ends."""

    def __init__(self, out: Path):
        self.path = out / LOCK
        try:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise cannot_write(out, exc) from None
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            holder = os.read(self.fd, 4096).decode(errors="replace").strip() or "another process"
            os.close(self.fd)
            raise FolderError(f"output folder {out} is in use by another minify run ({holder}); wait for it to "
                              f"end or choose another folder with -o") from None
        try:
            os.ftruncate(self.fd, 0)
            os.write(self.fd, f"pid {os.getpid()}: minify {' '.join(sys.argv[1:])}"[:4000].encode())
        except OSError as exc:
            self.release()
            raise cannot_write(out, exc) from None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the last descriptor releases the lock
            self.fd = None


def write_manifest(out: Path, program: str, entries: list[str]) -> None:
    data = {"program": program, "command": ["minify", *sys.argv[1:]], "pid": os.getpid(),
            "entries": sorted(set(entries) | set(OURS_ALWAYS)), "patterns": list(RUN_PATTERNS)}
    tmp = out / f"{MANIFEST}.{os.getpid()}"
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, out / MANIFEST)


def set_aside(out: Path, previous: Previous) -> list[str]:
    """Move the other program's run into previous-<time>/; the names kept at the top."""
    kept = [n for n in previous.ours if n in OURS_ALWAYS or fnmatch.fnmatch(n, PREVIOUS)]
    moving = [n for n in previous.ours if n not in kept]
    if not moving:
        return kept
    aside = out / time.strftime("previous-%Y%m%d-%H%M%S")
    while aside.exists():
        aside = aside.with_name(aside.name + "-1")
    aside.mkdir()
    for name in moving:
        os.replace(out / name, aside / name)
    return [*kept, aside.name]


def clear_own(out: Path, previous: Previous, resume: bool) -> list[str]:
    """The same program's earlier run: its results removed (all kept with --resume, which
    continues it); only entries the manifest lists are touched. The names kept."""
    kept = []
    for name in previous.ours:
        if resume or name in OURS_ALWAYS or fnmatch.fnmatch(name, PREVIOUS):
            kept.append(name)
            continue
        path = out / name
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        else:
            path.unlink(missing_ok=True)
    return kept


@dataclass
class Claim:
    """This run's hold on the folder: the lock, and the user's entries it found there."""

    out: Path
    program: str
    lock: Lock
    foreign: list[str]

    def release(self) -> None:
        """At the run's end: the manifest lists every top-level entry the run left, then the lock goes."""
        if self.lock.fd is None:
            return
        try:
            names = [p.name for p in self.out.iterdir()
                     if p.name not in self.foreign and not p.name.startswith(f"{MANIFEST}.")]
            write_manifest(self.out, self.program, names)
        except OSError:
            pass  # the manifest's patterns still cover what the run wrote
        self.lock.release()


def take(out: Path, program: str, same_program, force: bool, resume: bool) -> Claim:
    """Check and claim `out` for this run (it exists): the user's files refused or left alone,
    another run set aside (--force) or refused, this program's earlier run cleared (kept with
    --resume), the manifest written, the lock held."""
    previous = survey(out)
    check_foreign(out, previous, force)
    other = previous.program is not None and (not previous.program or not same_program(previous.program))
    if other and not force:
        what = f"a run of another program ({previous.program})" if previous.program else "a minify run of " \
            "an unknown program"
        raise FolderError(f"output folder {out} holds {what}; choose another with -o, or pass --force to move "
                          f"it into {out}/previous-<time>/")
    lock = Lock(out)
    try:
        previous = survey(out)  # again, now that no other run can change it
        check_foreign(out, previous, force)
        kept = set_aside(out, previous) if other else clear_own(out, previous, resume)
        write_manifest(out, program, [*kept, *RUN_OUTPUTS])
    except OSError as exc:
        lock.release()
        raise cannot_write(out, exc) from None
    except BaseException:
        lock.release()
        raise
    return Claim(out, program, lock, previous.foreign)
