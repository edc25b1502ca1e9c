"""`minify bisect REPRO_DIR`: the blame search on a repro folder, from the command line."""
from __future__ import annotations

import sys
from pathlib import Path

from minifier.blame.jobs import gpu_safety
from minifier.blame.search import blame_report
from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_NOT_REPRODUCED, EXIT_OK
from minifier.report.blame import print_blame
from repro.manifest import ReproFolderError
from repro.one_line_parser import OneLineParser


def main(argv: list[str]) -> int:
    """`minify bisect REPRO_DIR`: exit 0 once blamed, 2 for a bad folder, 4 if it did not reproduce."""
    p = OneLineParser(prog="minify bisect", description="Find which decomposition, pass, lowering, "
                                "fusion, code path or config flag a repro folder's failure needs.")
    p.add_argument("repro_dir", type=Path, help="a folder written by minify (holds repro.py and repro.json)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines, only the table")
    ns = p.parse_args(argv)
    say = (lambda text: None) if ns.quiet else (lambda text: print(text, flush=True))
    gpu_safety()  # before any process that may start CUDA
    try:
        report = blame_report(ns.repro_dir, say)
    except ReproFolderError as exc:
        print(f"minify: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    print_blame(report)
    return EXIT_OK if report["reproduced"] else EXIT_NOT_REPRODUCED
