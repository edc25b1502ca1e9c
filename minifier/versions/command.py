"""`minify versions REPRO_DIR --torch 2.13,2.14`: the repro under each torch, a table and the
regression window (also written into the folder's issue.md and report.json). With `--source
CHECKOUT --good A --bad B`: the first bad commit, by overlaying each commit's compiler trees
onto one installed build (docs/versions.md).

Exit status: 0 when a window was found (or a first bad commit named), 4 when none was (no
version reproduced it, none could run it, or the outcomes alternate; bisection left a range), 2
for bad input (a folder that is no repro, a bad version, a checkout or commit git does not know)."""
from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_NOT_REPRODUCED, EXIT_OK
from repro.manifest import ReproFolderError
from repro.one_line_parser import OneLineParser


def parser() -> OneLineParser:
    p = OneLineParser(prog="minify versions", description="Run a repro folder under other torch versions "
                      "(one cached venv each) and print the regression window; or, with --source/--good/--bad, "
                      "name the first bad commit of a PyTorch checkout whose compiler Python broke it.")
    p.add_argument("folder", type=Path, help="the repro folder (holds repro.py)")
    p.add_argument("--torch", default=None, help="versions: 2.13,2.14.1 or a range 2.11-2.14 (a minor version is "
                                                 "its newest release); with --source, the one build to overlay")
    p.add_argument("--index-url", help="the index pip (or uv) installs torch from, e.g. "
                                       "https://download.pytorch.org/whl/cpu or a nightly index")
    p.add_argument("--installer", choices=("pip", "uv"), default="pip", help="what creates the venvs (default pip)")
    p.add_argument("-j", "--jobs", type=int, default=None, help="versions run at once (default: a quarter of the cores)")
    p.add_argument("--timeout", type=float, default=900.0, help="seconds for one run of repro.py (default 900)")
    p.add_argument("--no-record", action="store_true", help="do not write the window into issue.md/report.json")
    p.add_argument("--source", type=Path, help="a PyTorch git checkout, for commit bisection")
    p.add_argument("--good", help="with --source: a commit where the repro passes")
    p.add_argument("--bad", help="with --source: a later commit where it reproduces")
    return p


def _fail(message: str) -> int:
    print(f"minify versions: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    from minifier.versions.outcome import expected_of

    if not ns.timeout > 0 or (ns.jobs is not None and ns.jobs < 1):
        return _fail("--timeout and --jobs must be greater than zero")
    try:
        expected = expected_of(ns.folder)
    except ReproFolderError as exc:
        return _fail(str(exc))
    if ns.source or ns.good or ns.bad:
        return _commits(ns, expected)
    if not ns.torch:
        return _fail("give the versions to run, e.g. --torch 2.13,2.14 (or --source/--good/--bad)")
    from minifier.versions.specs import parse_specs

    try:
        specs = parse_specs(ns.torch)
    except ValueError as exc:
        return _fail(str(exc))
    return run_versions(expected, specs, ns.index_url, ns.installer, ns.jobs, ns.timeout, not ns.no_record)


def run_versions(expected, specs: list[str], index_url: str | None, installer: str, jobs: int | None,
                 timeout: float, record: bool = True, say=None) -> int:
    """Run, print the table and the window, record it; the exit status."""
    from minifier.versions.record import table, write_issue, write_report
    from minifier.versions.run import run_version
    from minifier.versions.window import window

    say = say or (lambda s: print(f"  {s}", file=sys.stderr, flush=True))
    jobs = jobs or max(1, (os.cpu_count() or 1) // 4)
    recorded = f" (recorded with torch {expected.torch})" if expected.torch else ""
    print(f"minify versions: {expected.folder / 'repro.py'}{recorded} under torch {', '.join(specs)}", flush=True)
    with ThreadPoolExecutor(max_workers=min(jobs, len(specs))) as pool:
        rows = list(pool.map(lambda s: run_version(expected, s, timeout, index_url, installer, say), specs))
    found = window(rows)
    print(table(rows))
    print(f"window: {found.text}")
    if record:
        written = [p for p in (write_issue(expected.folder, rows, found), write_report(expected.folder, rows, found)) if p]
        if written:
            print(f"written into {', '.join(str(p) for p in written)}")
    return EXIT_OK if found.found else EXIT_NOT_REPRODUCED


def _commits(ns, expected) -> int:
    from minifier.versions.commits import bisect
    from minifier.versions.venvs import CannotInstall, python_for

    if not (ns.source and ns.good and ns.bad):
        return _fail("commit bisection needs all three of --source CHECKOUT, --good COMMIT and --bad COMMIT")
    if not (ns.source / ".git").exists():
        return _fail(f"--source {ns.source}: not a git checkout")
    try:
        python = python_for(ns.torch, ns.index_url, ns.installer) if ns.torch else None
    except CannotInstall as exc:
        return _fail(f"--torch {ns.torch}: cannot install: {exc}")
    executable = python.executable if python else Path(sys.executable)
    print(f"minify versions: bisecting {ns.good}..{ns.bad} of {ns.source} on "
          f"{f'torch {python.torch}' if python else 'this Python'}", flush=True)
    try:
        found = bisect(expected, ns.source, ns.good, ns.bad, executable, ns.timeout,
                       say=lambda s: print(f"  {s}", flush=True))
    except ValueError as exc:
        return _fail(str(exc))
    print(found.text)
    return EXIT_OK if found.found else EXIT_NOT_REPRODUCED
