"""A repro whose inputs.pt is damaged, truncated or empty cannot run: repro.py says CANNOT RUN
and ends with 2, and `minify replay` ends with 2 naming the file, never 1 ("reproduces"), which
a traceback's exit status used to be taken for."""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from minifier.cli import main
from minifier.exit_codes import EXIT_BAD_INPUT
from repro.writer import INPUTS_FILE
from test_repro_inputs import write


def _run(repro, cwd):
    return subprocess.run([sys.executable, "-I", str(repro)], cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_replay_of_damaged_inputs_is_cannot_run(tmp_path, capsys):
    repro = write(tmp_path / "repro", {"x": torch.randn(64)})  # 64 elements: saved in inputs.pt
    inputs = tmp_path / "repro" / INPUTS_FILE
    assert inputs.is_file() and "load_saved(device)" in repro.read_text()
    intact = inputs.read_bytes()  # intact, the repro runs (tests/test_repro_inputs.py): here, no compile is paid

    inputs.write_bytes(intact[: len(intact) // 2])  # truncated
    proc = _run(repro, tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
    assert proc.stdout.strip().startswith(f"CANNOT RUN: cannot load {inputs}") and "Traceback" not in proc.stderr
    assert main(["replay", str(tmp_path / "repro")]) == EXIT_BAD_INPUT
    said = capsys.readouterr().err.strip().splitlines()  # one-line errors go to standard error
    assert said[-1].startswith("minify: ") and str(inputs) in said[-1] and "could not run" in said[-1], said

    inputs.write_bytes(b"")  # empty: named before anything runs
    assert main(["replay", str(tmp_path / "repro")]) == EXIT_BAD_INPUT
    assert capsys.readouterr().err.strip() == f"minify: {inputs}: empty (repro.py loads its inputs from it)"
