"""The `minify` command line."""
from __future__ import annotations

import argparse
import errno
import os
import sys
import warnings
from pathlib import Path

from rich.markup import escape

from minifier.cli_args import COMMA_LISTS, comma_lists  # noqa: F401  (tests import them from here)
from minifier.run_log import RunLog

USAGE = """minify [options] SCRIPT [script args]
       minify [options] -m MODULE [module args]
       minify [options] path/test_x.py::test_y

Run SCRIPT (an unmodified program that calls torch.compile; a module as `python -m` runs it; one
pytest test) under the full compiler, find the graph and stage that fail (compile error, crash, or
numbers that differ from eager), reduce it and write a standalone repro.py with the real inputs.

Other commands (each has --help):
  minify replay REPRO_DIR          rerun a repro folder, print the verdict and metrics
  minify test-from REPRO_DIR DIR   write a pytest regression test from a repro folder
  minify bisect REPRO_DIR          find the decomposition/pass/lowering/fusion/flag to blame
  minify fuzz [--ops ...]          hypothesis-fuzz Inductor's lowerings, minify what fails
  minify bench [--cases ...]       run the corpus and score the answers
  minify batch -o OUT SCRIPT...    minify many scripts, locally or on a Dask cluster (--cluster)
  minify versions REPRO_DIR --torch 2.13,2.14   which torch builds the repro fails on (the window)"""

EXAMPLES = """examples:
  minify failing.py                        minify it; repro.py and the report go to minify-out/failing/
  minify -o out --max-time 600 train.py --epochs 1
                                           run `train.py --epochs 1`; stop reducing after 10 min
  minify -m pkg.train --steps 2            run it as `python -m pkg.train --steps 2`; output in minify-out/pkg.train/
  minify tests/test_model.py::test_block   the test's failing assertion under torch.compile is the failure
  minify fuzz --ops neg,exp --max-examples 50
                                           fuzz two ops' lowerings (lists take a,b or a b)"""

def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("minify")
    except metadata.PackageNotFoundError:  # run from a checkout without installing
        return "0.3.0"


def _version_line() -> str:
    from importlib import metadata

    try:
        torch_version = metadata.version("torch")
    except metadata.PackageNotFoundError:
        torch_version = "not installed"
    return f"minify {_version()} (torch {torch_version}, Python {sys.version.split()[0]})"


def _epilog() -> str:
    from minifier.exit_codes import EXIT_CODES

    import textwrap

    codes = "\n".join(textwrap.fill(text, 100, initial_indent=f"  {code:<4} ", subsequent_indent=" " * 7)
                      for code, text in EXIT_CODES.items())
    return f"{EXAMPLES}\n\nexit codes:\n{codes}"


def parser() -> argparse.ArgumentParser:
    from repro.one_line_parser import OneLineParser

    p = OneLineParser(prog="minify", usage=USAGE, description=None, epilog=_epilog(),
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=_version_line())
    p.add_argument("script", type=Path, nargs="?",
                   help="the failing Python script, or a failing pytest test as its node id (path/test_x.py::test_y)")
    p.add_argument("-m", dest="module", metavar="MODULE",
                   help="run the failing program as `python -m MODULE` would, from the current directory")
    p.add_argument("-o", "--out", type=Path,
                   help="output folder (default: minify-out/<the script's, module's or test's name>)")
    p.add_argument("-j", "--jobs", type=int, help="worker processes (default: 2, or one per four cores up to 4)")
    p.add_argument("--atol", type=float, help="absolute tolerance for floating outputs (default: by dtype)")
    p.add_argument("--rtol", type=float, help="relative tolerance for floating outputs (default: by dtype)")
    p.add_argument("--strict", action="store_true",
                   help="judge floating outputs by --atol/--rtol alone (no fp64 error-ratio leniency), and "
                        "bit for bit after every other check")
    p.add_argument("--ignore", nargs="+", action="extend", default=[], metavar="CHECK",
                   help="checks of the oracle to skip: signed-zero, layout (comma- or space-separated)")
    p.add_argument("--repeat", type=int, default=3,
                   help="the original failure must reproduce this many times out of as many (default 3)")
    p.add_argument("--hang-timeout", type=float, default=60.0,
                   help="seconds after which a candidate of a hang counts as hanging (default 60)")
    p.add_argument("--max-time", type=float, help="stop reducing after this many seconds; write the best so far")
    p.add_argument("--max-compiles", type=int, help="stop reducing after this many compiles; write the best so far")
    p.add_argument("--resume", action="store_true",
                   help="continue an interrupted or budget-limited run from the checkpoint in the output folder")
    p.add_argument("--force", action="store_true",
                   help="use the output folder even if it holds another script's run or files of its own")
    p.add_argument("--timeout", type=float, default=1800.0, metavar="S",
                   help="seconds the script may run (under the compiler, and again without it); a script still "
                        "running then counts as hanging (default 1800)")
    p.add_argument("--emit-test", type=Path, metavar="DIR",
                   help="also write a pytest regression test per repro into DIR (fails while the bug exists)")
    p.add_argument("--no-blame", action="store_true",
                   help="skip the search for the compiler part to blame (decomposition, pass, lowering, fusion...)")
    p.add_argument("--no-verify", action="store_true", help="do not re-run repro.py in a fresh process")
    p.add_argument("--early-checks", choices=["on", "off"],
                   help="replay each graph on the workers while the script still runs (default: on with 4 "
                        "cores or more; off leaves the workers idle until the script ends)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines, only the summary")
    p.add_argument("--versions", metavar="LIST", help="then run the verified repro under these torch versions, "
                   "e.g. 2.13,2.14 (as minify versions OUT --torch LIST does)")
    p.add_argument("--inject", action="append", default=[], metavar="SPEC",
                   help="plant a compiler bug before the script runs (repeatable), e.g. neg:accuracy:double, "
                        "lowering:sigmoid, decomposition:gelu, fusion:sigmoid+mul, reduction:sum:one, indexing")
    return p


# `minify NAME ...` runs NAME's module: each defines `main(argv: list[str]) -> int`.
SUBCOMMANDS: dict[str, str] = {
    "batch": "minifier.batch.command",
    "bench": "minifier.bench",
    "fuzz": "minifier.fuzz.command",
    "bisect": "minifier.bisect",
    "replay": "repro.replay",
    "test-from": "repro.testgen",
    "versions": "minifier.versions.command",
}


def _save_traceback(log: RunLog | None, exc: BaseException) -> Path | None:
    """Write `exc`'s traceback to the run's log (else, or when that cannot be written, to a
    file of its own); where it went, or None when nothing could be written."""
    import tempfile
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    for path in ([log.path] if log is not None else []) + [None]:
        try:
            if path is None:
                fd, name = tempfile.mkstemp(prefix="minify-error-", suffix=".log")
                os.close(fd)
                path = Path(name)
            with open(path, "a") as f:
                f.write(text)
            return path
        except OSError:
            continue
    return None


def _where(path: Path | None) -> str:
    return f" (traceback in {path})" if path else ""


def _internal_error(console, log: RunLog | None, exc: BaseException) -> int:
    """One line on the console; the traceback in the log."""
    from minifier.exit_codes import EXIT_INTERNAL

    console.print(f"[bold red]minify:[/bold red] internal error: {type(exc).__name__}: "
                  + escape(_first_line(exc) + _where(_save_traceback(log, exc))), highlight=False, soft_wrap=True)
    return EXIT_INTERNAL


# A write that failed for want of room or permission: the output folder's fault, not minify's.
WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM, errno.EFBIG}


def _no_space(folder: Path) -> bool:
    """Is the disk of `folder` full (less than 64 KiB left)?"""
    import shutil

    try:
        return shutil.disk_usage(folder).free < 64 * 1024
    except OSError:
        return False


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:200]


def _write_error(exc: OSError) -> str:
    where = f" {exc.filename}" if exc.filename else ""
    return f"cannot write{where}: {exc.strerror or exc}"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # minify never uses numpy: torch's warning that it is missing says nothing to the user here
    warnings.filterwarnings("ignore", message="Failed to initialize NumPy")
    if argv and argv[0] in SUBCOMMANDS:
        return _subcommand(argv[0], argv[1:])
    from minifier.cli_args import split_program_args, unknown_command
    from minifier.report.terminal import error_console

    from minifier.distributed.command import torchrun_form, with_torchrun  # `minify [options] torchrun ...`
    argv, torchrun = torchrun_form(argv, p := parser())  # a str: why minify cannot run that torchrun command
    if typo := torchrun if isinstance(torchrun, str) else argv and unknown_command(argv[0], list(SUBCOMMANDS)):
        error_console().print(f"[bold red]minify:[/bold red] {escape(typo)}", highlight=False, soft_wrap=True)
        return 2
    argv, script_args = split_program_args(argv, p)  # what follows the script is the program's
    try:
        ns = p.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a bad argument (one line)
        return _exit_status(exc)
    from compiler.judging import Judging
    from compiler.rungs import parse_ignore

    console = error_console()  # the one-line errors; the summary goes to standard output
    try:
        judging = Judging(ns.atol, ns.rtol, ns.strict, parse_ignore(ns.ignore))  # how every output is judged
    except ValueError as exc:
        console.print(f"[bold red]minify:[/bold red] {escape(str(exc))}", highlight=False)
        return 2
    from minifier.option_checks import bad_option

    bad = bad_option(ns)
    if bad:  # before anything is started or written
        console.print(f"[bold red]minify:[/bold red] {escape(bad)}", highlight=False, soft_wrap=True)
        return 2
    return _minify(ns, with_torchrun(ns, _options(ns, script_args, judging), torchrun), console)


def _exit_status(exc: SystemExit) -> int:
    return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2


def _subcommand(name: str, args: list[str]) -> int:
    """`minify bench|fuzz|bisect|...`: its own main; a missing package or a failure is one line."""
    import importlib

    try:
        module = importlib.import_module(SUBCOMMANDS[name])
        return module.main(comma_lists(args, COMMA_LISTS.get(name, {})))
    except SystemExit as exc:  # its --help, or a bad argument (one line)
        return _exit_status(exc)
    except ModuleNotFoundError as exc:  # e.g. `fuzz` without hypothesis
        if exc.name is None or exc.name.split(".")[0] in ("compiler", "repro", "minifier"):
            raise
        extra = "minify[fuzz]" if name == "fuzz" else "minify"
        print(f"minify {name}: needs the Python package {exc.name!r}: pip install '{extra}' "
              f"or pip install {exc.name}", file=sys.stderr)
        return 2
    except Exception as exc:  # one line; the traceback in a log of its own
        from minifier.report.terminal import error_console

        return _internal_error(error_console(), None, exc)


def _options(ns: argparse.Namespace, script_args: list[str], judging):
    from minifier.start.launch import Options, default_jobs

    return Options(script=ns.script, module=ns.module, script_args=script_args, out=ns.out,
                   jobs=ns.jobs or default_jobs(), judging=judging, repeat=max(1, ns.repeat),
                   hang_timeout=ns.hang_timeout, timeout=ns.timeout, max_time=ns.max_time, verify=not ns.no_verify,
                   max_compiles=ns.max_compiles, resume=ns.resume, injections=ns.inject, emit_test=ns.emit_test,
                   blame=not ns.no_blame, force=ns.force,
                   early_checks=None if ns.early_checks is None else ns.early_checks == "on")


def _minify(ns: argparse.Namespace, opts, console) -> int:
    """The main job under Ctrl-C/SIGTERM handling (minifier.interrupts): one stop within seconds."""
    from minifier.interrupts import Signals
    from minifier.workers.stop import STOP

    STOP.reset()
    started: list = []  # the Launched, once there is one (for a stop's report)
    say = lambda: console.print(f"[bold red]minify:[/bold red] {_interrupted(opts, started[0] if started else None)}",
                                highlight=False, soft_wrap=True)
    with Signals(say):
        return _minify_run(ns, opts, console, started)


def _minify_run(ns: argparse.Namespace, opts, console, started: list) -> int:
    """Launch, run the pipeline, print the summary; every way it can end is one line and a
    documented exit status (minifier/exit_codes.py)."""
    from compiler.capture_record import CaptureSchemaError
    from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_CANNOT_WRITE
    from minifier.interrupts import exit_code
    from minifier.start.launch import UserError, launch

    log: RunLog | None = None
    launched = None
    try:
        launched = launch(opts)  # the capture and the zygote start before this process imports torch
        started.append(launched)
        try:
            log = RunLog(launched.work / "minify.log", _version())  # before torch is imported here
            result = _run_pipeline(ns, opts, console, log, launched)
            if isinstance(result, int):
                return result
        finally:
            launched.stop()
            from minifier.report.gpu_health import after_run  # on a GPU: does it still answer? (said if not)
            health = after_run(launched.out, console)
        if health is not None:
            result.report["gpu_health"] = health
    except (UserError, CaptureSchemaError) as exc:  # the latter: a capture record of another minify's (--resume)
        console.print(f"[bold red]minify:[/bold red] {escape(str(exc))}", highlight=False, soft_wrap=True)
        return getattr(exc, "code", EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        console.print(f"[bold red]minify:[/bold red] {_interrupted(opts, launched)}", highlight=False, soft_wrap=True)
        return exit_code()
    except Exception as exc:
        if launched is not None and _no_space(launched.out):  # torch.save says so in its own words
            console.print(f"[bold red]minify:[/bold red] cannot write to the output folder {launched.out}: "
                          f"No space left on device" + _where(_save_traceback(None, exc)),
                          highlight=False, soft_wrap=True)
            return EXIT_CANNOT_WRITE
        if isinstance(exc, OSError) and exc.errno in WRITE_ERRNOS:
            console.print(f"[bold red]minify:[/bold red] {_write_error(exc)}", highlight=False, soft_wrap=True)
            return EXIT_CANNOT_WRITE
        return _internal_error(console, log, exc)
    from minifier.report.console import print_summary

    print_summary(result.report, console)
    if ns.versions and result.code == 0:  # the verified repro under other torch builds (minify versions)
        from minifier.versions.after_run import versions_after_run
        versions_after_run(launched.out, ns.versions)
    if result.report.get("stopped") == "interrupted":  # the reduction stopped at Ctrl-C; its best is written
        console.print(f"[bold red]minify:[/bold red] {_interrupted(opts, launched)}", highlight=False, soft_wrap=True)
        return exit_code()
    return result.code


def _run_pipeline(ns: argparse.Namespace, opts, console, log, launched):
    """The pipeline's Result, or an exit status when a planted bug's spec is bad."""
    from compiler.inject import bad_spec

    bad = bad_spec(ns.inject) if ns.inject else None
    if bad:
        console.print(f"[bold red]minify:[/bold red] {escape(bad)}", highlight=False)
        return 2
    from minifier.report.console import ConsoleUI
    from minifier.report.terminal import wide_console

    with ConsoleUI(console=wide_console(log.console), quiet=ns.quiet, start=launched.start, launched=launched) as ui:
        from minifier.run.pipeline import run  # torch: seconds, while the status line ticks
        return run(opts, ui, launched)


def _interrupted(opts, launched) -> str:
    """A stopped run's line; report.json is written here if the pipeline did not get to it (a
    stop while torch was being imported), and nothing started by the run is left running."""
    from minifier.run.stopped import stopped_line, write_stopped
    from minifier.workers.reap import kill_children
    from minifier.workers.stop import STOP

    STOP.request(STOP.reason or "interrupted")
    kill_children()
    if launched is None:
        return stopped_line(None)
    if not STOP.reported:
        import contextlib

        with contextlib.suppress(OSError):
            write_stopped(launched.out, opts.script, launched.start)
    return stopped_line(launched.out)


def main_exit() -> None:
    """Console-script entry point."""
    code = main()
    if "torch" in sys.modules:
        from compiler.quick_exit import quick_exit

        quick_exit(code)
    sys.exit(code)


if __name__ == "__main__":
    main_exit()
