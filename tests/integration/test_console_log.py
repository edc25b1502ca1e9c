"""The console shows minify's display only: torch's log lines, Python warnings and anything
else written to the process's standard error go to OUT/work/minify.log, and an unexpected
error is one line naming that log, which holds the traceback."""
import subprocess
import sys
import textwrap

import pytest

from minifier.exit_codes import EXIT_INTERNAL


# minify on a trivial script, with the pipeline replaced by one that makes noise the way torch
# does (a logging line from a torch logger, a Python warning, a C-level write to fd 2) and then
# fails unexpectedly.
NOISY = textwrap.dedent("""\
    import logging, os, sys, types, warnings

    def run(opts, ui, launched):
        ui.step("our own progress line")
        import torch
        logging.getLogger("torch._subclasses.fake_tensor").error("fake tensor raised TypeError")
        warnings.warn("TensorFloat32 tensor cores are available but not enabled", UserWarning)
        os.write(2, b"[W1124 12:00:00] a C++ warning\\n")
        raise RuntimeError("something minify did not expect")

    sys.modules["minifier.run.pipeline"] = types.SimpleNamespace(run=run)  # imported by the CLI after its log is set up
    from minifier.cli import main
    sys.exit(main(sys.argv[1:]))
    """)


@pytest.mark.e2e
def test_noise_goes_to_the_log_and_an_error_is_one_line(tmp_path, project_env):
    script = tmp_path / "fine.py"
    script.write_text("import torch\nprint(torch.compile(lambda x: x + 1)(torch.ones(2)))\n")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-c", NOISY, str(script), "-o", str(out)], cwd=tmp_path,
                          env={**project_env, "COLUMNS": "300"}, capture_output=True, text=True, timeout=300)
    console = proc.stdout + proc.stderr
    log = out / "work" / "minify.log"
    assert proc.returncode == EXIT_INTERNAL, console
    assert "Traceback" not in console
    for noise in ("fake tensor raised", "TensorFloat32", "C++ warning", "UserWarning"):
        assert noise not in console
    assert "our own progress line" in proc.stderr
    assert not proc.stdout.strip()  # the error goes to standard error, as the progress does
    assert proc.stderr.strip().splitlines()[-1] == (f"minify: internal error: RuntimeError: something minify did "
                                                    f"not expect (traceback in {log})")
    text = log.read_text()
    for expected in ("fake tensor raised TypeError", "TensorFloat32 tensor cores", "a C++ warning",
                     "Traceback", "RuntimeError: something minify did not expect"):
        assert expected in text, text
    assert script.read_text().startswith("import torch")


def test_the_capture_line_names_failing_graphs_so_an_index_is_not_read_as_a_count(tmp_path):
    """"failing: 0" read as "nothing failed" on a model whose one graph (index 0) had failed."""
    import io

    from rich.console import Console

    from minifier.capture.process import Capture, GraphRecord
    from minifier.report.console import ConsoleUI

    def line(failures: list) -> str:
        out = io.StringIO()
        graphs = [GraphRecord(i, tmp_path, 3, {}, failure) for i, failure in enumerate(failures)]
        ConsoleUI(Console(file=out, width=200)).capture_done(Capture(graphs, {"status": "ok"}, 1.0))
        return out.getvalue()

    bad = {"kind": "accuracy"}
    assert "failing: graph 0\n" in line([bad])
    assert "failing: graphs 0, 2\n" in line([bad, None, bad])
    assert "failing: none\n" in line([None])
