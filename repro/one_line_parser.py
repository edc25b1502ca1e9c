"""argparse, with a bad argument told in one line (the usage stays in --help): every minify
command's bad input is one line on standard error and exit 2 (minifier/exit_codes.py)."""
from __future__ import annotations

import argparse
import sys


class OneLineParser(argparse.ArgumentParser):
    def error(self, message: str):
        print(f"{self.prog}: {message} (see {self.prog} --help)", file=sys.stderr)
        raise SystemExit(2)
