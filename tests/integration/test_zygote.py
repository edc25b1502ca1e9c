"""The zygote forks fresh processes that have paid torch's start-up: what they print, how they
end (exit status, or the signal that killed them) and what they can see come back as from
`python script.py`; a repro that does not reproduce in one is checked again cold."""
import json
import signal

import pytest

from minifier.workers.zygote import Zygote, run_script, supported
from repro.verify import run_repro

pytestmark = pytest.mark.skipif(not supported(), reason="the zygote runs on CPU builds of torch only")


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    z = Zygote(tmp_path_factory.mktemp("zygote") / "zygote.log")
    assert z.wait_ready()
    yield z
    z.close()


def test_a_forked_script_runs_as_main_with_its_own_folder_and_arguments(zygote, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import json, os, sys\nprint(json.dumps([__name__, sys.argv, os.getcwd(), sys.path[0]]))\n"
                      "print('minifier' in sys.modules, file=sys.stderr)\nsys.exit(3)\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, out, err = run_script(zygote, script, ["a", "b"], elsewhere, timeout=60)
    assert code == 3
    assert json.loads(out) == ["__main__", [str(script), "a", "b"], str(elsewhere), str(tmp_path)]
    assert err.strip() == "False"  # nothing of minify's is imported in it


def test_a_forked_child_killed_by_a_signal_reports_the_signal(zygote, tmp_path):
    script = tmp_path / "abort.py"
    script.write_text("import os\nos.abort()\n")
    code, _, _ = run_script(zygote, script, [], tmp_path, timeout=60)
    assert code == -signal.SIGABRT


def test_a_no_from_the_shortcut_is_checked_cold(tmp_path):
    class Liar:  # stands for a prewarmed process that got it wrong
        def run(self, repro, args, timeout):
            return 0, "NOT REPRODUCED: no failure\n", ""

    repro = tmp_path / "repro.py"
    repro.write_text("import sys\nprint('REPRODUCED: accuracy: out[0]')\nsys.exit(1)\n")
    verification = run_repro(repro, prewarmed=Liar())
    assert verification.reproduced and verification.line.startswith("REPRODUCED")


def test_a_capture_hosts_the_zygote_and_both_work(tmp_path):
    """The capture imports torch, forks the zygote and then runs the script: the zygote's
    children are as clean as ever, the capture records as ever, and close() ends the zygote."""
    import os
    import time

    from minifier.capture.process import start_capture

    script = tmp_path / "user.py"
    script.write_text("import torch\nprint(torch.compile(lambda x: x.relu() + 1)(torch.randn(4)).shape)\n")
    probe = tmp_path / "probe.py"
    probe.write_text("import os, sys\nprint('minifier' in sys.modules, 'compiler' in sys.modules, os.nice(0))\n")
    z = Zygote(tmp_path / "zygote.log", hosted=True)
    running = start_capture(script, [], tmp_path / "capture", tmp_path / "script.log", host=z)
    try:
        assert z.wait_ready(), (tmp_path / "zygote.log").read_text()
        code, out, err = run_script(z, probe, [], tmp_path, timeout=60)
        assert (code, out.split()) == (0, ["False", "False", "10"]), err
        capture = running.finish(300)
        assert capture.script["status"] == "ok", (tmp_path / "script.log").read_text()
        assert len(capture.graphs) == 1 and capture.graphs[0].replayable
    finally:
        running.stop()
        pid = z.pid
        z.close()
    deadline = time.monotonic() + 10
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not os.path.exists(f"/proc/{pid}")
