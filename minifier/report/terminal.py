"""Where minify's text goes: the result (the summary, a table) on standard output, one-line errors
on standard error, tables as wide as the terminal or, in a pipe, wide enough to read. Light: no
torch here, the command line uses it before the capture starts."""
from __future__ import annotations

import os
import sys

from rich.console import Console

PIPE_WIDTH = 110  # columns of a table written to a pipe or file (rich's default 80 wrapped it a word a line)


class StandardError:
    """sys.stderr as it is at each write (pytest's capture sees it), or, once the run's log has
    taken file descriptor 2 (minifier.cli.RunLog), the real standard error saved before."""

    kept = None  # the saved real standard error, set by keep()

    @classmethod
    def keep(cls, real) -> None:
        cls.kept = real

    def _target(self):
        return StandardError.kept or sys.stderr

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def isatty(self) -> bool:
        return self._target().isatty()

    def fileno(self) -> int:
        return self._target().fileno()

    @property
    def encoding(self) -> str:
        return getattr(self._target(), "encoding", None) or "utf-8"


def wide_console(file=None) -> Console:
    """A console on `file` (standard output): as wide as the terminal, or PIPE_WIDTH columns where
    the output is no terminal and COLUMNS does not say otherwise."""
    console = Console(file=file)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console.width = PIPE_WIDTH
    return console


def error_console() -> Console:
    """A console for one-line errors, on standard error; `.results` is the standard-output
    console that minifier.report.console.print_summary writes the summary to."""
    console = wide_console(StandardError())
    console.results = wide_console()
    return console
