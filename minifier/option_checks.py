"""Every option of `minify SCRIPT` checked before anything is started or written: a bad value
is one line and exit 2 in well under a second (a --inject spec that parses is planted once,
which imports torch), never an error at the end of a long capture."""
from __future__ import annotations

import argparse
from pathlib import Path

# Options that must be positive, and those that may be zero: checked before anything starts.
POSITIVE = {"jobs": "-j", "repeat": "--repeat", "hang_timeout": "--hang-timeout", "max_time": "--max-time",
            "max_compiles": "--max-compiles", "timeout": "--timeout"}
NOT_NEGATIVE = {"atol": "--atol", "rtol": "--rtol"}


def bad_number(value, flag: str, positive: bool) -> str | None:
    """Why `value` of `flag` cannot be used (NaN, negative, or zero where it must be positive), or None."""
    if value is None:
        return None
    if value != value or value < 0 or (positive and value == 0):
        return f"{flag} {value}: must be {'greater than zero' if positive else 'zero or more'}"
    return None


def bad_option(ns: argparse.Namespace) -> str | None:
    """The one-line reason the options of `minify SCRIPT` cannot run, or None: ranges, the
    --inject specs (parsed here; planted and removed once only when they parse), folders."""
    for names, positive in ((POSITIVE, True), (NOT_NEGATIVE, False)):
        for attribute, flag in names.items():
            bad = bad_number(getattr(ns, attribute), flag, positive)
            if bad:
                return bad
    if getattr(ns, "versions", None):
        from minifier.versions.specs import parse_specs

        try:
            parse_specs(ns.versions)
        except ValueError as exc:
            return str(exc).replace("--torch", "--versions", 1)
    if ns.emit_test is not None and ns.emit_test.exists() and not ns.emit_test.is_dir():
        return f"--emit-test {ns.emit_test}: not a folder"
    return _bad_inject(ns.inject, _holds_a_run(ns)) if ns.inject else None


def _holds_a_run(ns: argparse.Namespace) -> bool:
    """Does the output folder already hold something a new run would replace (a previous run's
    work/ and results)? Only then is a spec planted before launch."""
    from compiler.launch_form import Launch

    if ns.out is not None:
        out = ns.out
    elif ns.module:
        out = Path("minify-out") / ns.module
    elif ns.script is not None and "::" not in str(ns.script):
        out = Path("minify-out") / Launch.script(ns.script).name
    else:
        return True
    return out.is_dir() and any(out.iterdir())


def _bad_inject(specs: list[str], plant: bool) -> str | None:
    """A spec that does not parse is refused at once. One that parses is planted and removed once
    (which imports torch, seconds that would otherwise overlap the capture's start) here only
    where the folder holds a run a bad spec must not wipe; otherwise after launch, as before."""
    from compiler import settings
    from compiler.inject import bad_spec, parse_spec

    for spec in specs:
        try:
            parse_spec(spec)
        except (ValueError, AttributeError, KeyError) as exc:
            return f"bad --inject {spec!r}: {exc}"
    if not plant:
        return None
    settings.share_cores()  # as launch would, before this process imports torch
    return bad_spec(specs)
