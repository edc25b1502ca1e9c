"""Which of `minify`'s arguments are its own and which belong to the program it runs, and what a
mistyped subcommand was probably meant to be.

As with `python script.py ARGS` and `python -m MODULE ARGS`, what follows the script (or
`-m MODULE`) is the program's: `minify train.py --steps 2` runs `train.py --steps 2`. minify's
own options go before the script; for the runs written before this rule, minify's options
right after the script are still taken as minify's (`minify train.py -o out -q`), up to the
first argument minify does not know (or a `--`), from which on everything is the program's.
"""
from __future__ import annotations

import argparse
import difflib
from pathlib import Path


def _takes(action: argparse.Action) -> int | str:
    """How many values the option takes after it: 0, 1, or "+" (one or more)."""
    if action.nargs in ("+", "*"):
        return "+"
    if action.nargs == 0 or isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction,
                                                 argparse._VersionAction, argparse._HelpAction)):
        return 0
    return 1 if action.nargs in (None, "?") else int(action.nargs)


def _skip_option(argv: list[str], i: int, action: argparse.Action, inline: bool) -> int:
    """The index after option argv[i] and its values."""
    takes = _takes(action)
    if inline or takes == 0:
        return i + 1
    if takes == "+":  # values up to the next option or the script (`--ignore layout train.py`)
        i += 1
        while i < len(argv) and not argv[i].startswith("-") and not _script_like(argv[i]):
            i += 1
        return i
    return i + 1 + takes


def _script_like(arg: str) -> bool:
    return arg.endswith(".py") or "::" in arg


def split_program_args(argv: list[str], parser: argparse.ArgumentParser) -> tuple[list[str], list[str]]:
    """(minify's arguments, the program's arguments). The script comes first in minify's, so that
    an option of several values before it (`--ignore a b train.py`) does not take it as one."""
    options = parser._option_string_actions
    i, script = 0, None
    target_seen = False
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            return _script_first(argv[:i], script), argv[i + 1:]
        name, eq, _ = arg.partition("=")
        if target_seen and name not in options:  # the first argument minify does not know: the program's from here
            return _script_first(argv[:i], script), argv[i:]
        if arg == "-m" or (arg.startswith("-m") and not arg.startswith("--")):
            target_seen = True
            i += 2 if arg == "-m" else 1
        elif arg.startswith("-") and arg != "-":
            action = options.get(name) or _abbreviated(parser, name)
            i = i + 1 if action is None else _skip_option(argv, i, action, bool(eq))
        else:
            target_seen, script = True, i
            i += 1
    return _script_first(argv, script), []


def _script_first(args: list[str], script: int | None) -> list[str]:
    return args if script is None else [args[script], *args[:script], *args[script + 1:]]


def _abbreviated(parser: argparse.ArgumentParser, name: str) -> argparse.Action | None:
    """The option that `name` abbreviates (argparse takes unique prefixes of long options)."""
    found = [a for option, a in parser._option_string_actions.items() if name.startswith("--") and
             option.startswith(name)]
    return found[0] if len({id(a) for a in found}) == 1 else None


def unknown_command(word: str, commands: list[str]) -> str | None:
    """The one-line error for `minify replya DIR`: a first argument that is no file, no test id
    and no option, but close to a subcommand's name. None where it may be a script."""
    if word.startswith("-") or "::" in word or "." in word or "/" in word or Path(word).exists():
        return None
    close = difflib.get_close_matches(word, commands, n=1, cutoff=0.6)
    if not close:
        return None
    return f"unknown command {word!r}: did you mean {close[0]}? (minify --help lists the commands)"


# List options of the subcommands that also take `a,b` (each value split at commas) or, for a
# single comma-separated value, `a b` (joined with commas). Specs (--inject, --mask) may hold
# commas of their own, so they are not lists here.
COMMA_LISTS = {"fuzz": {"--ops": "split", "--dtypes": "split"}, "bench": {"--cases": "join"}}


def comma_lists(argv: list[str], options: dict[str, str]) -> list[str]:
    """`argv` with the values of each list option in `options` as its parser takes them:
    "split" (one value each: `--ops neg,exp` is `--ops neg exp`) or "join" (one
    comma-separated value: `--cases a b` is `--cases a,b`)."""
    out: list[str] = []
    i = 0
    while i < len(argv):
        name, eq, inline = argv[i].partition("=")
        i += 1
        if name not in options:
            out.append(argv[i - 1])
            if argv[i - 1] == "--":
                out += argv[i:]
                break
            continue
        values = [inline] if eq else []
        while not eq and i < len(argv) and not argv[i].startswith("-"):
            values.append(argv[i])
            i += 1
        items = [v for value in values for v in value.split(",") if v]
        out += [name, ",".join(items)] if options[name] == "join" else [name, *items]
    return out
