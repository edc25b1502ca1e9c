"""Failures no single graph shows: Dynamo's own mistakes, reduced at the program level.

Real runs of the whole tool on corpus programs of 30+ lines (a model, a loop, unrelated
code) with a mistake planted in Dynamo (compiler/inject_dynamo.py). Every captured graph
matches eager on its own inputs, so the answer must come from the program-level stage
ladder (the layer is Dynamo) and the source reduction (a short repro.py that fails alone).
"""
import ast
import json
import subprocess
import sys

import pytest

from conftest import CORPUS, run_minify
from minifier.program.instrument import PROLOGUE, instrument, render
from minifier.program.source_passes import PASSES

pytestmark = pytest.mark.slow


def program_part(repro: str) -> list[str]:
    """repro.py's lines after the check prologue: the reduced program itself."""
    tail = repro.split("    return call\n", 1)[1]
    return [line for line in tail.splitlines() if line.strip()]


@pytest.mark.parametrize("name, signature", [
    ("dynamo_fold_attention", "torch.compile differs from eager:"),
    ("dynamo_crash_abs", "torch.compile raised where eager did not: InternalTorchDynamoError"),
])
def test_dynamo_mistake_ends_in_a_short_verified_program_repro(name, signature, tmp_path):
    script = CORPUS / f"{name}.py"
    before = script.read_bytes()
    proc = run_minify([str(script), "-o", str(tmp_path / "out"), "--emit-test", str(tmp_path / "tests")], cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "out of scope" not in proc.stdout and "compiled together" not in proc.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["status"] == "program" and report["layer"]["name"] == "Dynamo"
    assert report["layer"]["runs"][0] == {**report["layer"]["runs"][0], "backend": "eager", "fails": True}
    program = report["program"]
    assert program["verified"] and program["signature"].startswith(signature)  # and the kind of failure
    repro = (tmp_path / "out" / "repro.py").read_text()
    assert "from compiler" not in repro and "import minifier" not in repro  # stands alone
    assert len(program_part(repro)) <= 15, repro
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    run = subprocess.run([sys.executable, str(tmp_path / "out" / "repro.py")], cwd=elsewhere, capture_output=True,
                         text=True, timeout=300, env={"PATH": "/usr/bin:/bin", "TORCHINDUCTOR_FX_GRAPH_CACHE": "0"})
    assert run.returncode == 1 and run.stderr.strip().splitlines()[-1].startswith(signature), run.stderr[-2000:]
    assert "Dynamo" in (tmp_path / "out" / "issue.md").read_text()
    assert script.read_bytes() == before
    test = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path / "tests")],
                          cwd=elsewhere, capture_output=True, text=True, timeout=600)
    assert test.returncode == 1 and "1 failed" in test.stdout, test.stdout[-2000:]  # fails while the bug is there


def test_every_source_candidate_parses_and_keeps_the_check():
    """Passes work on the tree: each candidate unparses to valid Python, and none drops the
    backend the layer forced on the checked compile."""
    tree = instrument((CORPUS / "dynamo_fold_attention.py").read_text(), "eager")
    seen = 0
    for p in PASSES:
        for candidate in p.candidates(tree):
            text = render(candidate)
            ast.parse(text)
            assert text.startswith(PROLOGUE)
            for call in ast.walk(candidate):
                if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "compiled_checked":
                    assert any(k.arg == "backend" and k.value.value == "eager" for k in call.keywords)
            seen += 1
    assert seen > 50


def test_a_program_that_reads_its_own_path_keeps_it():
    """Candidates run from the work folder and the repro from anywhere: a program that finds its
    data beside itself through `__file__` gets the script's path set first (after the docstring
    and `from __future__` imports), and one that does not is left alone."""
    import ast

    from minifier.program.program_repro import own_path

    source = '"""doc"""\nfrom __future__ import annotations\nimport torch\nx = open(__file__)\n'
    tree = ast.parse(source)
    own_path(tree, CORPUS / "data_script.py")
    lines = ast.unparse(tree).splitlines()
    assert lines[2] == f"__file__ = {str((CORPUS / 'data_script.py').resolve())!r}", lines
    plain = ast.parse("import torch\nx = 1\n")
    own_path(plain, CORPUS / "data_script.py")
    assert ast.unparse(plain) == "import torch\nx = 1"
