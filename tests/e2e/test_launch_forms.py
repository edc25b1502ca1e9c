"""The program launched the way users launch it: `minify -m pkg.module -- args` and a pytest node id
(`minify path/test_x.py::test_y`), each a real run on a small program written into tmp_path. The
working directory, sys.path[0], `__name__` and argparse are checked by the program itself: it
raises (with and without the compiler alike) when one differs from a normal run."""
import json

import pytest

from conftest import run_minify
from compiler.launch_form import Launch, module_file, node_launch
from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_CODES, EXIT_OK
from minifier.program.program_repro import program_source

TRAIN = """\
import argparse, os, sys
import torch
from pkg.helper import total

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, required=True)
args = parser.parse_args()
assert __name__ == "__main__" and args.steps == 2
assert sys.path[0] == os.getcwd() and os.path.isdir("pkg"), (sys.path[:2], os.getcwd())
assert sys.argv[0].endswith(os.path.join("pkg", "train.py")), sys.argv
torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"
step = torch.compile(lambda x: torch.relu(x) * 2)
print(total([step(torch.randn(8)) for _ in range(args.steps)]))
"""

# Fails only compiled: Dynamo folds 3 * 4 wrongly (planted with --inject dynamo:fold:mul), so
# every graph matches eager on its own inputs and only the test's own assertion shows it.
TEST = """\
import torch


class Scale(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.a, self.b = 3, 4

    def forward(self, x):
        return x * (self.a * self.b) + 1


def test_passes():
    assert True


def test_scale_matches_eager():
    model = Scale()
    x = torch.ones(3)
    expected = model(x)
    assert torch.equal(torch.compile(model)(x), expected), "compiled differs from eager"
"""


def write_package(root):
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "helper.py").write_text("def total(xs):\n    return sum(float(x.sum()) for x in xs)\n")
    (root / "pkg" / "train.py").write_text(TRAIN)


def test_launch_names_and_sources(tmp_path):
    write_package(tmp_path)
    assert module_file("pkg.train", [str(tmp_path)]) == (tmp_path / "pkg" / "train.py").resolve()
    assert module_file("pkg.nothing", [str(tmp_path)]) is None and module_file("a-b", [str(tmp_path)]) is None
    assert Launch("module", "pkg.train", str(tmp_path)).name == "pkg.train"
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_s.py").write_text(TEST)
    test = node_launch(str(tmp_path / "tests" / "test_s.py") + "::test_scale_matches_eager", tmp_path)
    assert test.name == "test_scale_matches_eager" and test.capture_args()[:2] == ["--form", "test"]
    source, path = program_source(test)
    assert path == tmp_path / "tests" / "test_s.py" and source.rstrip().endswith("\ntest_scale_matches_eager()")
    klass = node_launch(f"{tmp_path / 'tests' / 'test_s.py'}::TestC::test_y[1-2]", tmp_path)
    assert klass.name == "test_y_1-2" and program_source(klass)[0].rstrip().endswith("\nTestC().test_y()")


def test_an_unknown_module_is_bad_input(tmp_path):
    proc = run_minify(["-m", "pkg.nothing"], cwd=tmp_path, timeout=120)
    assert proc.returncode == EXIT_BAD_INPUT and "no module named 'pkg.nothing'" in proc.stderr  # one-line errors go to stderr
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.slow
def test_module_with_arguments(tmp_path):
    write_package(tmp_path)
    proc = run_minify(["-m", "pkg.train", "-q", "--no-blame", "--", "--steps", "2"], cwd=tmp_path)
    console = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_OK and proc.returncode in EXIT_CODES, console[-3000:]
    assert "Traceback" not in console
    out = tmp_path / "minify-out" / "pkg.train"  # named after the module
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "reproduced" and report["ops"] == ["relu"], report
    run = json.loads((out / "work" / "run.json").read_text())
    assert run["launch"] == {"form": "module", "target": "pkg.train", "cwd": str(tmp_path)}


@pytest.mark.slow
def test_pytest_node_id_failing_only_compiled(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_model.py").write_text(TEST)
    proc = run_minify(["tests/test_model.py::test_scale_matches_eager", "--inject", "dynamo:fold:mul", "-q"],
                      cwd=tmp_path)
    console = proc.stdout + proc.stderr
    assert proc.returncode == EXIT_OK and proc.returncode in EXIT_CODES, console[-3000:]
    assert "Traceback" not in console
    out = tmp_path / "minify-out" / "test_scale_matches_eager"  # named after the test
    script = json.loads((out / "work" / "capture" / "script.json").read_text())
    assert script["status"] == "error" and script["type"] == "AssertionError"
    assert script["message"].startswith("compiled differs from eager")
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "program" and report["layer"]["name"] == "Dynamo"
    assert report["program"]["verified"], report["program"]
