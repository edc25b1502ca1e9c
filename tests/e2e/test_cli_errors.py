"""Bad input gets one clear line and a documented non-zero exit, never a traceback or a torch
log line on the console, and nothing of the user's changes; a script that does not fail says so.

One table, one fixture: each case writes the user's files into a folder of their own, hashes
that folder, runs minify, and checks the line, the exit status and the hashes. Most cases end
before anything is compiled.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import ROOT, run_minify
from minifier.exit_codes import (EXIT_BAD_INPUT, EXIT_CANNOT_WRITE, EXIT_CODES, EXIT_INTERRUPTED,
                                     EXIT_NOTHING_FAILED)

COMPILES = "import torch\nf = torch.compile(lambda x: x * 2)\nf(torch.ones(3))\n"
TORCH_LOG_LINE = re.compile(r"^\[?[EWIF]\d{4} ", re.M)  # torch's glog-style lines: W1124 12:00:00.000 ...


def _tree(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _one_line(proc: subprocess.CompletedProcess) -> str:
    console = proc.stdout + proc.stderr
    assert "Traceback" not in console, console
    assert not TORCH_LOG_LINE.search(console) and "Warning:" not in console, console
    errors = [line for line in console.splitlines() if line.startswith("minify:")]
    assert len(errors) == 1, console
    assert errors[0] in proc.stderr.splitlines() and not proc.stdout.strip()  # errors and progress: stderr
    return errors[0]


def _mount_tmpfs(path: Path, options: str) -> bool:
    path.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        return False
    return subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                          capture_output=True).returncode == 0


@dataclass
class Case:
    name: str
    script: str | None  # the user's script (None: there is none)
    code: int
    says: tuple[str, ...]  # in the one line
    args: list[str] = field(default_factory=list)  # before the script's path
    prepare: str | None = None  # how the output folder is set up (see _prepare)


CASES = [
    Case("missing file", None, EXIT_BAD_INPUT, ("no such file",)),
    Case("syntax error", "def f(:\n", EXIT_BAD_INPUT, ("syntax error", ":1:")),
    Case("fails in eager too", COMPILES + "raise ValueError(\"the script's own bug\")\n", EXIT_BAD_INPUT,
         ("fails without torch.compile too", "not a compiler bug", "ValueError: the script's own bug")),
    Case("no torch.compile", "import torch\nprint(torch.ones(2) + 1)\n", EXIT_NOTHING_FAILED,
         ("never called a torch.compile'd function",)),
    Case("sys.exit(3)", COMPILES + "import sys\nsys.exit(3)\n", EXIT_BAD_INPUT,
         ("not a compiler bug", "exit status 3")),
    Case("reads stdin", COMPILES + "n = int(input('size? '))\n", EXIT_BAD_INPUT,
         ("not a compiler bug", "EOFError", "standard input")),
    Case("hangs", "import time\ntime.sleep(600)\n", EXIT_BAD_INPUT,
         ("not a compiler bug", "did not finish within 2 s (--timeout)"), args=["--timeout", "2"]),
    Case("output folder is a file", COMPILES, EXIT_CANNOT_WRITE, ("cannot write to the output folder",
                                                                  "Not a directory"), prepare="file"),
    Case("output folder is read-only", COMPILES, EXIT_CANNOT_WRITE, ("cannot write to the output folder",
                                                                     "Read-only file system"), prepare="readonly"),
    Case("disk full", COMPILES, EXIT_CANNOT_WRITE, ("cannot write", "No space left on device"), prepare="full"),
    Case("disk fills during the run", "import torch\nf = torch.compile(lambda x: x * 2)\nf(torch.ones(2 ** 18))\n",
         EXIT_CANNOT_WRITE, ("cannot write to the output folder", "No space left on device"), prepare="small"),
    Case("another script's run", COMPILES, EXIT_BAD_INPUT, ("holds a run of another program", "--force"),
         prepare="other run"),
    Case("another script's run, --force", "import torch\n", EXIT_NOTHING_FAILED,
         ("never called a torch.compile'd function",), args=["--force"], prepare="other run"),
    Case("foreign files in the output folder", COMPILES, EXIT_BAD_INPUT, ("files that no minify run wrote",),
         prepare="foreign"),
]


@pytest.fixture
def user(tmp_path):
    """(the user's folder, where output goes, a function that unmounts what a case mounted)."""
    mounts: list[Path] = []
    yield tmp_path / "user", tmp_path / "out", mounts
    for path in mounts:
        subprocess.run(["umount", str(path)], capture_output=True)


def _prepare(how: str | None, out: Path, mounts: list) -> Path:
    """The output folder to pass with -o, set up as the case needs."""
    if how == "file":
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("a file, not a folder\n")
        return out / "run"
    if how in ("readonly", "full", "small"):  # small: room to start, not for the script's 1 MB input
        options = {"readonly": "ro,size=64k", "full": "size=16k", "small": "size=96k"}[how]
        if not _mount_tmpfs(out, options):
            pytest.skip("needs root to mount a small tmpfs")
        mounts.append(out)
        if how == "full":
            fd = os.open(out / "filler", os.O_WRONLY | os.O_CREAT)
            try:
                while os.write(fd, b"x" * 512):
                    pass
            except OSError:  # full
                pass
            finally:
                os.close(fd)
            return out / "run"  # the filler is the user's: the output folder is a new one beside it
        return out
    if how == "other run":
        (out / "work").mkdir(parents=True)
        (out / "work" / "run.json").write_text(json.dumps({"script": "/somewhere/else/other.py"}))
        (out / "report.json").write_text(json.dumps({"script": "/somewhere/else/other.py"}))
        return out
    if how == "foreign":
        out.mkdir(parents=True)
        (out / "thesis.tex").write_text("\\documentclass{article}\n")
        return out
    return out


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_bad_input_is_one_line(case: Case, user):
    home, out, mounts = user
    home.mkdir()
    script = home / "script.py"
    if case.script is not None:
        script.write_text(case.script)
    out = _prepare(case.prepare, out, mounts)
    before = _tree(home)
    proc = run_minify([*case.args, str(script), "-o", str(out)], cwd=home, timeout=300)
    line = _one_line(proc)
    assert proc.returncode == case.code, proc.stdout + proc.stderr
    assert case.code in EXIT_CODES
    for words in case.says:
        assert words in line, line
    assert _tree(home) == before  # the script and its folder are as they were
    if case.prepare == "foreign":
        assert (out / "thesis.tex").read_text() == "\\documentclass{article}\n"
    if case.prepare == "other run" and "--force" in case.args:  # set aside whole, never mixed with this run
        aside = [p for p in out.iterdir() if p.name.startswith("previous-")]
        assert len(aside) == 1 and json.loads((aside[0] / "report.json").read_text())["script"].endswith("other.py")
        assert "other.py" not in (out / "report.json").read_text()


def test_ctrl_c_keeps_what_was_found_and_says_so(user):
    """SIGINT to minify once its run is under way (the script is running under the compiler)."""
    home, out, _ = user
    home.mkdir()
    script = home / "slow.py"
    script.write_text(COMPILES + "import time\ntime.sleep(120)\n")
    before = _tree(home)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    # As a terminal's Ctrl-C finds it: a runner that started the tests as a background job (`cmd &`)
    # has SIGINT ignored, and a child would inherit that, so the signal would never arrive.
    proc = subprocess.Popen([sys.executable, "-m", "minifier", str(script), "-o", str(out)], cwd=home, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    seen = []
    for line in proc.stderr:  # progress lines
        seen.append(line)
        if "under the recording backend" in line:
            break
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    done = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, "".join(seen) + stderr)
    line = _one_line(done)
    assert proc.returncode == EXIT_INTERRUPTED, done.stdout + done.stderr
    assert "interrupted" in line and str(out) in line and "--resume" in line
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "interrupted" and report["script"] == str(script)
    assert (out / "work" / "capture").is_dir()  # what the capture recorded so far stays
    assert _tree(home) == before


def test_script_that_does_not_fail(tmp_path):
    script = tmp_path / "fine.py"
    script.write_text(textwrap.dedent("""\
        import torch
        f = torch.compile(lambda x, y: torch.relu(x) * y + 1)
        print(f(torch.randn(16), torch.randn(16)).sum())
        """))
    proc = run_minify([str(script)], cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "Nothing failed" in proc.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fine.py", "minify-out"]
    again = run_minify([str(script), "--no-verify"], cwd=tmp_path)  # its own earlier run: no refusal
    assert again.returncode == 3, again.stdout + again.stderr


def test_script_arguments_reach_the_script(tmp_path):
    script = tmp_path / "args.py"
    script.write_text(textwrap.dedent("""\
        import sys
        import torch
        assert sys.argv[1:] == ["--size", "8"], sys.argv
        f = torch.compile(lambda x: x + 1)
        f(torch.ones(int(sys.argv[2])))
        """))
    proc = run_minify([str(script), "--size", "8"], cwd=tmp_path)  # what follows the script is the script's
    assert proc.returncode == 3, proc.stdout + proc.stderr


def test_help(tmp_path):
    proc = run_minify(["--help"], cwd=tmp_path)
    assert proc.returncode == 0 and "minify SCRIPT" in proc.stdout
