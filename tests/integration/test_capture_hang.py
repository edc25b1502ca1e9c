"""A script whose compiled code never returns is a hang as soon as one of its C++ kernels has run
past --hang-timeout (the capture marks each kernel while it runs: compiler/crash_trace.py), not
at the end of --timeout (30 minutes by default); the graph it was calling carries the hang."""
import textwrap
import time

import pytest

from minifier.capture.process import CaptureOptions, start_capture

SCRIPT = textwrap.dedent("""
    import torch

    def f(x):
        return torch.tanh(torch.relu(x @ x)) + 1

    x = torch.randn(64, 64)
    print(torch.compile(f)(x).sum())
""")


@pytest.mark.slow
def test_a_kernel_stuck_past_the_hang_limit_ends_the_script_as_a_hang(tmp_path):
    script = tmp_path / "spins.py"
    script.write_text(SCRIPT)
    options = CaptureOptions(injections=["relu:runtime_error:hang"])
    start = time.perf_counter()
    capture = start_capture(script, [], tmp_path / "capture", tmp_path / "capture.log", options).finish(
        timeout=600, hang_after=5)
    seconds = time.perf_counter() - start
    assert capture.script["status"] == "hang", capture.script
    message = capture.script["message"]
    assert "relu" in message and "ran past 5 s (--hang-timeout)" in message, message
    assert seconds < 300, seconds  # ended by the stuck kernel, long before --timeout's 600 s
    assert capture.graphs and capture.graphs[0].failure["kind"] == "hang", capture.graphs


@pytest.mark.slow
def test_a_script_that_finishes_is_not_ended_by_the_hang_limit(tmp_path):
    """Without the plant the same script ends by itself, with the hang limit as short as can be."""
    script = tmp_path / "fine.py"
    script.write_text(SCRIPT)
    capture = start_capture(script, [], tmp_path / "capture", tmp_path / "capture.log").finish(
        timeout=600, hang_after=0.5)
    assert capture.script["status"] == "ok", capture.script
    assert not (tmp_path / "capture" / "kernel-running").exists()  # its marks file goes with the capture
