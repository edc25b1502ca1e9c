"""Habits of the ecosystem: --version, --help with examples and the exit codes (one table in
the code, the same in the README), list options that take `a,b` as well as `a b`."""
import re
import subprocess
import sys

import pytest

from conftest import ROOT

from minifier.cli import COMMA_LISTS, comma_lists
from minifier.exit_codes import EXIT_CODES


def _minify(*args, env):
    return subprocess.run([sys.executable, "-m", "minifier", *args], cwd=ROOT, env={**env, "COLUMNS": "200"},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
def test_version(project_env):
    proc = _minify("--version", env=project_env)
    assert proc.returncode == 0
    assert re.fullmatch(r"minify \d+\.\d+\.\d+ \(torch [^,]+, Python 3\.\d+\.\d+\)\n", proc.stdout), proc.stdout


@pytest.mark.e2e
def test_help_shows_examples_and_every_exit_code(project_env):
    proc = _minify("--help", env=project_env)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    text = " ".join(proc.stdout.split())
    assert "examples:" in text and "minify failing.py" in text and "--ops neg,exp" in text
    for code, meaning in EXIT_CODES.items():
        assert f"{code} {' '.join(meaning.split())}" in text


def test_the_readme_lists_the_same_exit_codes():
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    listed = dict(re.findall(r"^- `(\d+)`: (.+)$", section, re.M))
    assert {int(k): v for k, v in listed.items()} == EXIT_CODES


def test_lists_take_commas_as_well_as_spaces():
    fuzz = COMMA_LISTS["fuzz"]
    assert comma_lists(["--ops", "neg,exp", "--seed", "1"], fuzz) == ["--ops", "neg", "exp", "--seed", "1"]
    assert comma_lists(["--ops", "neg", "exp"], fuzz) == ["--ops", "neg", "exp"]
    assert comma_lists(["--ops=neg,exp", "--dtypes", "float32,", "int64"], fuzz) == \
        ["--ops", "neg", "exp", "--dtypes", "float32", "int64"]
    assert comma_lists(["--inject", "exp:compile_error@cppvec,cpp"], fuzz) == ["--inject", "exp:compile_error@cppvec,cpp"]
    bench = COMMA_LISTS["bench"]
    assert comma_lists(["--cases", "a", "b", "--all"], bench) == ["--cases", "a,b", "--all"]
    assert comma_lists(["--cases", "a,b"], bench) == ["--cases", "a,b"]


def test_fuzz_takes_ops_with_commas():
    """`minify fuzz --ops neg,exp` was refused; its parser now gets the ops one by one."""
    from minifier.fuzz.command import parser

    ns = parser().parse_args(comma_lists(["--ops", "neg,exp", "--dtypes", "float32"], COMMA_LISTS["fuzz"]))
    assert ns.ops == ["neg", "exp"] and ns.dtypes == ["float32"]


def test_default_workers_follow_the_machine(monkeypatch):
    """No -j: two workers on a small machine, one per four cores up to four on a big one."""
    import os

    from minifier.cli import _options, parser
    from minifier.start.launch import default_jobs

    seen = {}
    for cores in (1, 2, 8, 16, 64):
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid, n=cores: set(range(n)))
        seen[cores] = default_jobs()
    assert seen == {1: 2, 2: 2, 8: 2, 16: 4, 64: 4}
    assert _options(parser().parse_args(["x.py"]), [], ()).jobs == seen[64]
    assert _options(parser().parse_args(["x.py", "-j", "3"]), [], ()).jobs == 3
