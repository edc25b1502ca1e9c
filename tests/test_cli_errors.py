"""Bad input gets one clear line and a non-zero exit; a script that does not fail says so."""
import textwrap

import pytest

from conftest import run_minify


def _one_line_error(proc):
    assert "Traceback" not in proc.stdout + proc.stderr
    errors = [l for l in (proc.stdout + proc.stderr).splitlines() if l.startswith("minify:")]
    assert len(errors) == 1, proc.stdout + proc.stderr
    assert proc.stdout.strip() == errors[0]  # the error is all stdout says; progress goes to stderr
    return errors[0]


def test_missing_file(tmp_path):
    proc = run_minify([str(tmp_path / "nope.py")], cwd=tmp_path)
    assert proc.returncode == 2
    assert "no such file" in _one_line_error(proc)


def test_syntax_error(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("def f(:\n")
    proc = run_minify([str(script)], cwd=tmp_path)
    assert proc.returncode == 2
    assert "syntax error" in _one_line_error(proc)


def test_script_failing_without_the_compiler(tmp_path):
    script = tmp_path / "broken.py"
    source = textwrap.dedent("""\
        import torch
        f = torch.compile(lambda x: x * 2)
        f(torch.ones(3))
        raise ValueError("the script's own bug")
        """)
    script.write_text(source)
    proc = run_minify([str(script)], cwd=tmp_path)
    assert proc.returncode == 2
    assert "ValueError" in _one_line_error(proc)
    assert script.read_text() == source


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


def test_script_arguments_reach_the_script(tmp_path):
    script = tmp_path / "args.py"
    script.write_text(textwrap.dedent("""\
        import sys
        import torch
        assert sys.argv[1:] == ["--size", "8"], sys.argv
        f = torch.compile(lambda x: x + 1)
        f(torch.ones(int(sys.argv[2])))
        """))
    proc = run_minify([str(script), "--", "--size", "8"], cwd=tmp_path)
    assert proc.returncode == 3, proc.stdout + proc.stderr


@pytest.mark.parametrize("flag", ["--help"])
def test_help(tmp_path, flag):
    proc = run_minify([flag], cwd=tmp_path)
    assert proc.returncode == 0 and "minify SCRIPT" in proc.stdout
