"""A sweep of bad input over every command: bad options, bad scripts, bad output folders, bad
repro folders, subcommand misuse. Each is refused before anything starts, in this process
(`minifier.cli.main(argv)`), with one line, its documented exit status, no traceback, and
nothing anywhere changed: not the user's files, not the output folder.
"""
from __future__ import annotations

import fcntl
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from minifier.cli import main
from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_CANNOT_WRITE, EXIT_CODES

GOOD = "import torch\nf = torch.compile(lambda x: x * 2)\nf(torch.ones(3))\n"


def _state(folder: Path) -> dict[str, str]:
    """Every file (by content) and folder under `folder`."""
    import hashlib

    return {str(p.relative_to(folder)): "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*"))}


@dataclass
class Case:
    name: str
    argv: list[str]  # {home}, {out}, {script} are filled in
    code: int
    says: str  # in the one line
    prepare: str | None = None  # see _prepare


def _c(name, argv, says, code=EXIT_BAD_INPUT, prepare=None):
    return Case(name, argv.split(), code, says, prepare)


S, O = "{script}", "-o {out}"
CASES = [
    # options of `minify SCRIPT`, out of range or unparsable
    _c("atol negative", f"{S} {O} --atol -1", "--atol -1.0: must be zero or more"),
    _c("rtol negative", f"{S} {O} --rtol -0.5", "--rtol -0.5: must be zero or more"),
    _c("atol nan", f"{S} {O} --atol nan", "--atol nan"),
    _c("jobs zero", f"{S} {O} -j 0", "-j 0: must be greater than zero"),
    _c("jobs negative", f"{S} {O} -j -3", "-j -3: must be greater than zero"),
    _c("jobs not a number", f"{S} {O} -j many", "invalid int value: 'many'"),
    _c("repeat zero", f"{S} {O} --repeat 0", "--repeat 0"),
    _c("repeat negative", f"{S} {O} --repeat -2", "--repeat -2: must be greater than zero"),
    _c("max-time zero", f"{S} {O} --max-time 0", "--max-time 0.0"),
    _c("max-time negative", f"{S} {O} --max-time -1", "--max-time -1.0: must be greater than zero"),
    _c("max-compiles zero", f"{S} {O} --max-compiles 0", "--max-compiles 0"),
    _c("hang-timeout zero", f"{S} {O} --hang-timeout 0", "--hang-timeout 0.0"),
    _c("hang-timeout negative", f"{S} {O} --hang-timeout -5", "--hang-timeout -5.0"),
    _c("timeout zero", f"{S} {O} --timeout 0", "--timeout 0.0: must be greater than zero"),
    _c("timeout negative", f"{S} {O} --timeout -3", "--timeout -3.0"),
    _c("timeout not a number", f"{S} {O} --timeout soon", "invalid float value: 'soon'"),
    _c("versions not a version", f"{S} {O} --versions 2.x", "--versions 2.x: not a torch version"),
    _c("versions reversed range", f"{S} {O} --versions 2.14-2.11", "--versions"),
    _c("inject bad kind", f"{S} {O} --inject neg:bogus", "bad --inject 'neg:bogus'"),
    _c("inject bad form", f"{S} {O} --inject neg:accuracy:sideways", "bad --inject"),
    _c("ignore unknown check", f"{S} {O} --ignore everything", "everything"),
    _c("early-checks bad choice", f"{S} {O} --early-checks maybe", "invalid choice: 'maybe'"),
    _c("unknown option", f"--frobnicate {S} {O}", "unrecognized arguments: --frobnicate"),  # before the script: after it, the program's
    _c("emit-test is a file", f"{S} {O} --emit-test {{home}}/notes.txt", "--emit-test"),
    # the program
    _c("no program", f"{O}", "name the failing program"),
    _c("missing script", f"{{home}}/nothere.py {O}", "no such file"),
    _c("script is a folder", f"{{home}}/sub {O}", "not a file"),
    _c("syntax error", f"{{home}}/broken.py {O}", "syntax error"),
    _c("null bytes", f"{{home}}/binary.py {O}", "source code string cannot contain null bytes"),  # a SyntaxError
    # from Python 3.11.4 ("syntax error: ..."), a ValueError before ("cannot read as Python source: ...")
    _c("script and -m", f"{S} -m json.tool {O}", "not both"),
    _c("no such module", f"-m no_such_module_here {O}", "no module named 'no_such_module_here'"),
    # the output folder
    _c("output under a file", f"{S} -o {{home}}/notes.txt/out", "Not a directory", code=EXIT_CANNOT_WRITE),
    _c("output is a file", f"{S} -o {{home}}/notes.txt", "Not a directory", code=EXIT_CANNOT_WRITE),
    _c("output is the script's folder", f"{S} -o {{home}}", "the script's own folder"),
    _c("output holds the script", f"{{home}}/sub/inner.py -o {{home}}", "holds the script"),
    _c("user's files", f"{S} {O}", "files that no minify run wrote", prepare="foreign"),
    _c("user's work/ folder", f"{S} {O}", "work/important.txt", prepare="user work"),
    _c("user's inputs.pt, --force", f"{S} {O} --force", "inputs.pt", prepare="user inputs"),
    _c("another program's run", f"{S} {O}", "holds a run of another program", prepare="other run"),
    _c("folder in use", f"{S} {O}", "in use by another minify run (pid 4242: minify other.py", prepare="locked"),
    # minify replay
    _c("replay: no folder given", "replay", "the following arguments are required"),
    _c("replay: missing folder", "replay {home}/nothere", "no such folder"),
    _c("replay: a file", "replay {home}/notes.txt", "not a folder"),
    _c("replay: not a repro folder", "replay {home}/sub", "holds no repro.py"),
    _c("replay: unreadable repro.json", "replay {out}", "unreadable", prepare="repro garbage"),
    _c("replay: empty inputs.pt", "replay {out}", "inputs.pt: empty", prepare="repro empty inputs"),
    _c("replay: missing inputs.pt", "replay {out}", "inputs.pt: missing", prepare="repro no inputs"),
    _c("replay: timeout zero", "replay {out} --timeout 0", "--timeout 0.0", prepare="repro no inputs"),
    # other subcommands
    _c("test-from: missing folder", "test-from {home}/nothere {home}/tests", "no such folder"),
    _c("test-from: no arguments", "test-from", "the following arguments are required"),
    _c("bench: unknown option", "bench --frobnicate", "unrecognized arguments"),
    _c("fuzz: max-examples zero", "fuzz --max-examples 0 -o {out}", "--max-examples 0"),
    _c("fuzz: max-time negative", "fuzz --max-time -1 -o {out}", "--max-time -1.0"),
    _c("fuzz: max-steps zero", "fuzz --max-steps 0 -o {out}", "--max-steps 0"),
    _c("fuzz: backward share", "fuzz --backward 2 -o {out}", "--backward 2.0"),
    _c("fuzz: user's folder", "fuzz -o {out}", "files that no fuzz run wrote", prepare="foreign"),
]


def _repro_folder(out: Path, inputs: bytes | None, manifest: str | None = None) -> None:
    out.mkdir(parents=True)
    (out / "repro.py").write_text("print('REPRODUCED: would be')\nraise SystemExit(1)\n")
    (out / "repro.json").write_text(manifest or json.dumps(
        {"format": 1, "kind": "accuracy", "signature": "accuracy@inductor", "inputs_file": "inputs.pt"}))
    if inputs is not None:
        (out / "inputs.pt").write_bytes(inputs)


def _prepare(how: str | None, out: Path, home: Path) -> None:
    from minifier.start.out_folder import LOCK, MANIFEST

    if how == "foreign":
        out.mkdir()
        (out / "thesis.tex").write_text("\\documentclass{article}\n")
    elif how == "user work":
        (out / "work").mkdir(parents=True)
        (out / "work" / "important.txt").write_text("mine\n")
    elif how == "user inputs":
        out.mkdir()
        (out / "inputs.pt").write_bytes(b"my own tensors")
    elif how == "other run":
        (out / "work").mkdir(parents=True)
        (out / "work" / "run.json").write_text(json.dumps({"script": "/somewhere/else/other.py"}))
        (out / "report.json").write_text(json.dumps({"script": "/somewhere/else/other.py"}))
    elif how == "locked":
        out.mkdir()
        (out / MANIFEST).write_text(json.dumps({"program": str(home / "script.py"), "entries": [MANIFEST, LOCK]}))
        (out / LOCK).write_text("pid 4242: minify other.py -o out")
    elif how == "repro garbage":
        _repro_folder(out, None, manifest="{not json")
    elif how == "repro empty inputs":
        _repro_folder(out, b"")
    elif how == "repro no inputs":
        _repro_folder(out, None)


@pytest.fixture
def user(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    (home / "script.py").write_text(GOOD)
    (home / "sub" / "inner.py").write_text(GOOD)
    (home / "broken.py").write_text("def f(:\n")
    (home / "binary.py").write_bytes(b"x = 1\0\n")
    (home / "notes.txt").write_text("my notes\n")
    monkeypatch.chdir(home)
    monkeypatch.setenv("COLUMNS", "250")
    return tmp_path, home


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_sweep(case: Case, user, capsys):
    root, home = user
    out = root / "out"
    _prepare(case.prepare, out, home)
    held = None
    if case.prepare == "locked":  # another run holds the folder's lock
        from minifier.start.out_folder import LOCK

        held = os.open(out / LOCK, os.O_RDWR)
        fcntl.flock(held, fcntl.LOCK_EX)
    argv = [a.format(home=home, out=out, script=home / "script.py") for a in case.argv]
    before = _state(root)
    start = time.perf_counter()
    try:
        code = main(argv)
    finally:
        if held is not None:
            os.close(held)
    seconds = time.perf_counter() - start
    said = capsys.readouterr()
    console = said.out + said.err
    lines = [line for line in console.splitlines() if line.strip()]
    assert "Traceback" not in console, console
    assert len(lines) == 1, console
    assert lines[0].startswith("minify"), console
    assert case.says in lines[0], lines[0]
    assert code == case.code and code in EXIT_CODES, (code, console)
    assert _state(root) == before  # nothing created, changed or deleted, the output folder included
    if case.argv[0] not in ("fuzz", "bench", "test-from", "replay"):  # those import torch, once
        assert seconds < 1.5, f"{seconds:.1f} s"  # refused before anything starts
