"""Programs whose compiled graphs call a torch.library custom op of their own: a bug planted in
Inductor's handling of the op ends in a verified repro that carries the op's definition (and
runs from another folder in a fresh process), and a wrong register_fake or an input written that
the op's schema says it does not write is the user's (exit 2)."""
import os
import subprocess
import sys

from conftest import CORPUS, run_minify
from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_OK


def test_a_planted_bug_in_a_custom_ops_lowering_ends_in_a_standalone_repro_carrying_the_op(tmp_path):
    out = tmp_path / "out"
    run = run_minify([str(CORPUS / "lowering_custom_op_scale.py"), "-o", str(out)], tmp_path)
    assert run.returncode == EXIT_OK, run.stdout[-3000:] + run.stderr[-3000:]
    repro = (out / "repro.py").read_text()
    assert '@torch.library.custom_op("mylib::scale_rows"' in repro and "def _row_norms" in repro
    assert "torch.ops.mylib.scale_rows(" in repro.split("def f(", 1)[1]  # the minimal graph calls it
    assert "def main" not in repro and "class GatedBlock" not in repro and "from compiler" not in repro
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # needs torch only
    compiled = subprocess.run([sys.executable, str(out / "repro.py")], cwd=elsewhere, env=env, capture_output=True,
                              text=True, timeout=300)
    assert compiled.returncode == 1 and "REPRODUCED" in compiled.stdout, compiled.stdout + compiled.stderr
    eager = subprocess.run([sys.executable, str(out / "repro.py")], cwd=elsewhere, capture_output=True, text=True,
                           env={**env, "TORCHDYNAMO_DISABLE": "1"}, timeout=300)
    assert eager.returncode == 0, eager.stdout + eager.stderr


def test_a_custom_op_whose_fake_is_wrong_is_the_users_bug(tmp_path):
    run = run_minify([str(CORPUS / "real" / "control_custom_op_wrong_fake.py"), "-o", str(tmp_path / "out")],
                     tmp_path)
    assert run.returncode == EXIT_BAD_INPUT, run.stdout[-3000:] + run.stderr[-3000:]
    line = run.stderr.strip().splitlines()[-1]
    assert "custom op is defined wrongly" in line and "mylib::row_energy" in line and "Traceback" not in run.stderr


def test_a_custom_op_that_writes_an_input_its_schema_says_it_does_not_is_the_users_bug(tmp_path):
    """Before, this ended in a verified "Inductor accuracy bug" (sigmoid, normalize_rows, mul): the
    compiler had trusted the op's declaration that it writes nothing."""
    run = run_minify([str(CORPUS / "real" / "control_custom_op_undeclared_mutation.py"), "-o", str(tmp_path / "out")],
                     tmp_path)
    assert run.returncode == EXIT_BAD_INPUT, run.stdout[-3000:] + run.stderr[-3000:]
    line = run.stderr.strip().splitlines()[-1]
    assert "mylib::normalize_rows" in line and "mutates_args" in line and "Traceback" not in run.stderr
