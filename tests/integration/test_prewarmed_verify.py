"""The pre-started interpreter that verifies repros on CUDA builds (the PrewarmedPython that
minifier.workers.interpreters.WarmInterpreters hands out where no zygote forks warm)
ends as `python repro.py` would: the script's own exit status, its atexit handlers run, its
output flushed, an uncaught exception's traceback and status 1. It skips only the
interpreter's teardown of torch.compile's objects, which came after the verdict. Its job comes on
stdin (compiler/boot/wire.py) and never reaches the script; what the script prints, verdict-like
lines and frame-like bytes included, is its output alone and the verdict is read from it."""
import subprocess
import sys

import pytest

from minifier.workers.interpreters import WarmInterpreters
from repro.verify import _verdict

SCRIPT = """
import atexit, pathlib, sys
atexit.register(lambda: pathlib.Path(sys.argv[1]).write_text("atexit ran"))
assert sys.stdin.read() == "", "the runner's job reached the script"
print("NOT REPRODUCED: a print of the script's own")
sys.stdout.write("\\x1d\\x00\\x00\\x00\\x00\\x00\\x00\\x00 a frame's header, as noise\\n")
print("REPRODUCED: as planted", end="")  # no newline: flushed at exit all the same
raise SystemExit(1)
"""


def _both(script, args: list[str]) -> tuple[tuple, tuple]:
    prewarmed = WarmInterpreters().take().run(script, args, 300.0)  # no zygote: a fresh interpreter
    cold = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    return prewarmed, (cold.returncode, cold.stdout, cold.stderr)


@pytest.mark.slow
def test_a_repro_ends_with_its_own_status_output_and_atexit_handlers(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text(SCRIPT)
    (code, out, _), (cold_code, cold_out, _) = _both(script, [str(tmp_path / "mark")])
    noise = "NOT REPRODUCED: a print of the script's own\n\x1d\x00\x00\x00\x00\x00\x00\x00 a frame's header, as noise\n"
    assert (code, out) == (cold_code, cold_out) == (1, noise + "REPRODUCED: as planted")
    verdict = _verdict(code, out, "", 0.0)
    assert verdict.reproduced and verdict.line == "REPRODUCED: as planted"
    assert (tmp_path / "mark").read_text() == "atexit ran"


@pytest.mark.slow
def test_an_uncaught_exception_ends_with_status_1_and_its_traceback(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text("raise ValueError('planted')\n")
    (code, _, err), (cold_code, _, cold_err) = _both(script, [])
    assert code == cold_code == 1
    assert "ValueError: planted" in err and "ValueError: planted" in cold_err
