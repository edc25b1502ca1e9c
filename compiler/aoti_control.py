"""AOTInductor turned off, for every run that stands for "nothing compiled".

Turning Dynamo off (TORCHDYNAMO_DISABLE=1) leaves `torch._inductor.aoti_compile_and_package`
and the package loader as they are: a script that exports a module and compiles it with
AOTInductor still runs Inductor's C++ there, so a bug of AOTInductor would show in the
control too and be taken for the user's own. Here the two are replaced: "compiling" keeps the
ExportedProgram, and the loaded "package" runs `ep.module()`, the exported program run eagerly.
A package this process did not make (a file from an earlier run) cannot be turned off: it
is loaded for real, and `torch._inductor._minify_aoti_uncontrolled` says so.

The turn-off is compiler/boot/control_run.py's turn_off_aoti, which the control run calls in
its own process (a file run by path, importing only torch).
"""
from __future__ import annotations

import os
import sys

from compiler.boot import CONTROL_RUN
from compiler.boot.control_run import turn_off_aoti


def turn_off() -> None:
    """In this process: AOTInductor compiles nothing and its packages run eagerly."""
    turn_off_aoti()


def control_command(path) -> list[str]:
    """`python PATH` with nothing compiled: Dynamo off (as TORCHDYNAMO_DISABLE=1) and AOTInductor off."""
    return [sys.executable, CONTROL_RUN, os.path.abspath(os.fspath(path))]
