"""The `minify` command line."""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

USAGE = """minify SCRIPT [options] [-- script args]

Run SCRIPT (an unmodified program that calls torch.compile) under the full compiler, find the
graph and stage that fail (compile error, crash, or numbers that differ from eager), reduce
that graph to a minimal one and write a standalone repro.py with the real inputs beside it."""


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minify", usage=USAGE, description=None,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("script", type=Path, help="the failing Python script")
    p.add_argument("-o", "--out", type=Path, help="output folder (default: minify-out/<script name>)")
    p.add_argument("-j", "--jobs", type=int, default=2, help="worker processes (default 2)")
    p.add_argument("--atol", type=float, help="absolute tolerance for floating outputs (default: by dtype)")
    p.add_argument("--rtol", type=float, help="relative tolerance for floating outputs (default: by dtype)")
    p.add_argument("--max-time", type=float, help="stop reducing after this many seconds; write the best so far")
    p.add_argument("--timeout", type=float, default=1800.0, help="limit for the script's own run (seconds)")
    p.add_argument("--no-verify", action="store_true", help="do not re-run repro.py in a fresh process")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines, only the summary")
    return p


# `minify NAME ...` runs NAME's module: each defines `main(argv: list[str]) -> int`.
SUBCOMMANDS: dict[str, str] = {}


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        import importlib

        return importlib.import_module(SUBCOMMANDS[argv[0]]).main(argv[1:])
    script_args: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, script_args = argv[:cut], argv[cut + 1:]
    ns = parser().parse_args(argv)
    from rich.console import Console

    console = Console()
    from minifier.pipeline import Options, UserError, run
    from minifier.report import ConsoleUI, print_summary

    opts = Options(script=ns.script, script_args=script_args, out=ns.out, jobs=ns.jobs, atol=ns.atol,
                   rtol=ns.rtol, timeout=ns.timeout, max_time=ns.max_time, verify=not ns.no_verify)
    try:
        result = run(opts, ConsoleUI(quiet=ns.quiet))
    except UserError as exc:
        console.print(f"[bold red]minify:[/bold red] {exc}", highlight=False)
        return exc.code
    except KeyboardInterrupt:
        console.print("[bold red]minify:[/bold red] interrupted")
        return 130
    print_summary(result.report, console)
    return result.code


def main_exit() -> None:
    """Console-script entry point."""
    sys.exit(main())


if __name__ == "__main__":
    main_exit()
