"""The output folder is minify's alone (issue 44): the user's files in it are never deleted or
overwritten, --force sets another program's run aside instead of mixing with it, a bad option
after a finished run leaves that run (and its work/ for --resume) as it was, and one run at a
time holds the folder, the lock going with the process that held it.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import ROOT
from compiler.capture_record import SCHEMA_VERSION
from minifier.cli import main
from minifier.exit_codes import EXIT_BAD_INPUT
from minifier.start.out_folder import LOCK, MANIFEST, FolderError, take
from test_cli_sweep import _state

GOOD = "import torch\nf = torch.compile(lambda x: x * 2)\nf(torch.ones(3))\n"


def _finished_run(out: Path, script: Path) -> None:
    """A folder as a finished run of `script` leaves it: results, work/ with its checkpoints, manifest."""
    (out / "work" / "capture").mkdir(parents=True)
    (out / "work" / "run.json").write_text(json.dumps({"script": str(script)}))
    (out / "work" / "capture" / "script.json").write_text("{}")
    (out / "work" / "candidates-0.json").write_text("[]")
    for name in ("repro.py", "issue.md", "report.html"):
        (out / name).write_text(f"{name} of {script.name}\n")
    (out / "report.json").write_text(json.dumps({"script": str(script), "status": "ok"}))
    entries = ["work", "repro.py", "issue.md", "report.html", "report.json"]
    (out / MANIFEST).write_text(json.dumps({"program": str(script), "entries": entries, "patterns": ["bug-*"]}))


def test_the_users_work_folder_and_inputs_are_never_touched(tmp_path, monkeypatch, capsys):
    """`minify -o DIR ok.py` where DIR held the user's work/important.txt and inputs.pt: refused,
    with or without --force, and both files as they were."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text(GOOD)
    out = tmp_path / "dir"
    (out / "work").mkdir(parents=True)
    (out / "work" / "important.txt").write_text("a week of notes\n")
    (out / "inputs.pt").write_bytes(b"the user's own tensors")
    before = _state(tmp_path)
    for extra in ([], ["--force"]):
        assert main(["ok.py", "-o", str(out), *extra]) == EXIT_BAD_INPUT
        line = capsys.readouterr().err.strip()
        assert "no minify run wrote" in line and str(out) in line and "\n" not in line, line
        assert _state(tmp_path) == before


def test_force_leaves_other_files_and_sets_another_run_aside(tmp_path):
    out = tmp_path / "out"
    _finished_run(out, tmp_path / "other.py")
    (out / "thesis.tex").write_text("mine\n")
    same = lambda previous: previous == str(tmp_path / "ok.py")  # noqa: E731
    try:
        take(out, str(tmp_path / "ok.py"), same, force=False, resume=False)
        raise AssertionError("a folder with the user's file was taken without --force")
    except FolderError as exc:
        assert "thesis.tex" in str(exc)
    claim = take(out, str(tmp_path / "ok.py"), same, force=True, resume=False)
    (out / "repro.py").write_text("this run's repro\n")  # as the run writes it
    claim.release()
    aside = [p for p in out.iterdir() if p.name.startswith("previous-")]
    assert len(aside) == 1 and (aside[0] / "repro.py").read_text() == "repro.py of other.py\n"
    assert sorted(p.name for p in aside[0].iterdir()) == ["issue.md", "report.html", "report.json", "repro.py",
                                                        "work"]
    # nothing of the other run beside the new one; the user's file where it was
    assert sorted(p.name for p in out.iterdir()) == sorted([MANIFEST, LOCK, aside[0].name, "thesis.tex", "repro.py"])
    assert (out / "thesis.tex").read_text() == "mine\n"
    manifest = json.loads((out / MANIFEST).read_text())
    assert "thesis.tex" not in manifest["entries"] and aside[0].name in manifest["entries"]
    # a rerun of the same program replaces only what the manifest lists: the user's file stays
    take(out, str(tmp_path / "ok.py"), same, force=True, resume=False).release()
    assert not (out / "repro.py").exists() and (out / "thesis.tex").exists() and aside[0].exists()


def test_a_bad_option_after_a_finished_run_keeps_it(tmp_path, monkeypatch, capsys):
    """`minify --inject neg:bogus SCRIPT` after a finished run of SCRIPT: exit 2, and the run's
    results and work/ (what --resume continues from) are as they were."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "ok.py"
    script.write_text(GOOD)
    out = tmp_path / "minify-out" / "ok"
    _finished_run(out, script)
    before = _state(tmp_path)
    for bad in (["--inject", "neg:bogus"], ["--atol", "-1"], ["--timeout", "0"]):
        assert main([*bad, str(script), "-o", str(out)]) == EXIT_BAD_INPUT
        assert capsys.readouterr().err.strip().startswith("minify: ")
        assert _state(tmp_path) == before


def test_atol_negative_is_refused_at_once_and_writes_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text(GOOD)
    start = time.perf_counter()
    assert main(["ok.py", "--atol", "-1"]) == EXIT_BAD_INPUT
    assert time.perf_counter() - start < 1.0
    assert capsys.readouterr().err.strip() == "minify: --atol -1.0: must be zero or more"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.py"]  # no minify-out/


HOLD = """
import sys, time
from pathlib import Path
from minifier.start.out_folder import take
claim = take(Path(sys.argv[1]), sys.argv[2], lambda p: True, force=False, resume=False)
print("held", flush=True)
time.sleep(120)
"""


def test_one_run_per_folder_and_the_lock_dies_with_its_process(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "ok.py"
    script.write_text(GOOD)
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(out), str(script), "--", "ok.py"], env=env,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        before = _state(tmp_path)
        assert main(["ok.py", "-o", str(out)]) == EXIT_BAD_INPUT
        line = capsys.readouterr().err.strip()
        assert f"in use by another minify run (pid {holder.pid}: minify " in line, line
        assert _state(tmp_path) == before  # the running run's folder untouched
    finally:
        os.kill(holder.pid, signal.SIGKILL)  # as a crash ends it: no clean-up of its own
        holder.wait(timeout=30)
    claim = take(out, str(script), lambda p: True, force=False, resume=False)  # the kernel let go
    claim.release()


def test_resume_over_an_older_minifys_capture_is_one_line(tmp_path, monkeypatch, capfd):
    """--resume where work/capture holds a graph record an older minify wrote (no schema_version,
    docs/capture-record.md): one line naming the file and both versions, exit 2, not a KeyError."""
    monkeypatch.chdir(tmp_path)
    script = tmp_path / "ok.py"
    script.write_text(GOOD)
    out = tmp_path / "out"
    _finished_run(out, script)
    old = out / "work" / "capture" / "graph_5"
    old.mkdir()
    (old / "record.json").write_text(json.dumps({"index": 5, "nodes": 3, "part": "forward"}))
    assert main(["ok.py", "-o", str(out), "--resume"]) == EXIT_BAD_INPUT
    line = capfd.readouterr().err.strip().splitlines()[-1]  # the console's stderr, beside minify.log
    assert line == (f"minify: {old / 'record.json'} was written by a minify of capture schema 0 (before records "
                    f"were versioned); this one reads {SCHEMA_VERSION}: run again into a new folder"), line
    assert (out / "repro.py").read_text() == "repro.py of ok.py\n"  # the earlier run's results kept
