"""Generated regression tests fail while the bug exists and pass once it is gone.

Bugs come from Inductor's own test hook (cpp.inject_relu_bug_TESTING_ONLY, captured as config)
and from compiler.inject (a planted C++ codegen bug in neg); "fixed" means the config or the
injection is gone. Each generated test runs under a real pytest, in a fresh process.
"""
import os
import re
import subprocess
import sys
import textwrap

import pytest
import torch
import torch.fx as fx

from compiler.inject import Injection
from compiler.stages import CompileSetup, CompileSpec
from conftest import ROOT, run_minify
from repro.testgen import write_test
from repro.writer import ReproInfo, write_repro

NEG_BUG = Injection("neg", template="decltype({x})(2 * {x})", paths=("cpp", "cppvec"))


class Relu(torch.nn.Module):
    def forward(self, x):
        return (torch.relu(x),)


class Neg(torch.nn.Module):
    def forward(self, level):
        return (torch.neg(level),)


def traced(module):
    gm = fx.symbolic_trace(module)
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm


def repro_folder(folder, module, inputs, config=None, injections=()):
    info = ReproInfo(signature="accuracy@inductor", kind="accuracy", stage="inductor", message="differs from eager",
                     setup=CompileSetup(CompileSpec(config=dict(config or {})), [i.to_dict() for i in injections]),
                     source=f"{folder.name}.py, graph 0 of 1", script=f"{folder.name}.py", graph=0)
    write_repro(folder, traced(module), inputs, info)
    return folder


def pytest_outcomes(tests_dir, prelude=""):
    """{test file name: PASSED/FAILED} from a real pytest run in a fresh process."""
    code = prelude + "import pytest, sys\nsys.exit(pytest.main(['-q', '-rA', '-p', 'no:cacheprovider', sys.argv[1]]))"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code, str(tests_dir)], cwd=tests_dir, env=env, capture_output=True,
                          text=True, timeout=600)
    found = dict((m.group(2), m.group(1)) for m in re.finditer(r"^(PASSED|FAILED) (\S+?)::", proc.stdout, re.M))
    return found, proc.stdout[-4000:]


@pytest.mark.slow
def test_generated_tests_fail_with_the_bug_and_pass_without(tmp_path):
    x = torch.randn(64)
    buggy = repro_folder(tmp_path / "relu_bug", Relu(), [x], {"cpp.inject_relu_bug_TESTING_ONLY": "accuracy"})
    fixed = repro_folder(tmp_path / "relu_fixed", Relu(), [x])
    neg = repro_folder(tmp_path / "neg_planted", Neg(), [torch.tensor([3, 200], dtype=torch.uint8)],
                       injections=[NEG_BUG])
    dest = tmp_path / "tests"
    relu_bug, relu_fixed = write_test(buggy, dest), write_test(fixed, dest)
    neg_default = write_test(neg, dest)
    neg_planted = write_test(neg, dest, with_injection=True, name="neg_with_injection")
    assert len({relu_bug, relu_fixed, neg_default, neg_planted}) == 4 and relu_bug.name.startswith("test_relu_bug")
    assert sorted(p.name for p in dest.iterdir() if p.suffix == ".py") == sorted(
        p.name for p in (relu_bug, relu_fixed, neg_default, neg_planted))  # nothing beside them
    assert "def check():" in relu_bug.read_text() and "torch.isclose(a, e, atol=0.0001" in relu_bug.read_text()
    outcomes, log = pytest_outcomes(dest)
    assert outcomes == {relu_bug.name: "FAILED", relu_fixed.name: "PASSED",
                        neg_default.name: "PASSED", neg_planted.name: "FAILED"}, log
    as_script = subprocess.run([sys.executable, str(relu_bug)], cwd=tmp_path, capture_output=True, text=True,
                               timeout=600)  # the test file run as a script says what differs, as repro.py does
    assert as_script.returncode == 1 and as_script.stdout.startswith(
        "REPRODUCED: out[0] (torch.float32): beyond tolerance, and further from fp64 than eager"), as_script.stdout
    # The default test judges the compiler as it is: with the bug planted in the pytest process, it fails.
    prelude = textwrap.dedent(f"""\
        from compiler.inject import inject_bug
        inject_bug("neg", template={NEG_BUG.template!r}, paths=("cpp", "cppvec"))
        """)
    neg_default_dir = tmp_path / "only_default"
    neg_default_dir.mkdir()
    only = write_test(neg, neg_default_dir)
    outcomes, log = pytest_outcomes(neg_default_dir, prelude)
    assert outcomes == {only.name: "FAILED"}, log


@pytest.mark.e2e
def test_test_from_cli_writes_one_test_per_repro_folder(tmp_path):
    out = repro_folder(tmp_path / "out", Relu(), [torch.randn(4)])
    repro_folder(out / "bug-2", Neg(), [torch.tensor([1], dtype=torch.uint8)])
    proc = run_minify(["test-from", str(out), str(tmp_path / "tests")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = [line.split(" ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("wrote ")]
    assert len(written) == 2 and all(os.path.isfile(p) for p in written)
    for path in written:
        compile(open(path).read(), path, "exec")
    again = run_minify(["test-from", str(out), str(tmp_path / "tests")], cwd=tmp_path)
    assert again.stdout == proc.stdout  # the same repros rewrite the same tests
    bad = run_minify(["test-from", str(tmp_path / "nowhere"), str(tmp_path / "tests")], cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.strip().startswith("minify: no such folder")
    assert "Traceback" not in bad.stdout + bad.stderr
