"""`minify batch` (issue 50): each script gets a folder of its own, and bad input is one line and
exit 2 before anything runs or is written."""
from __future__ import annotations

from pathlib import Path

import pytest

from minifier.batch.command import main, names
from minifier.batch.task import summary_row
from minifier.exit_codes import EXIT_BAD_INPUT

ROOT = Path(__file__).resolve().parents[2]


def test_each_script_gets_a_folder_of_its_own():
    scripts = [Path("a/model.py"), Path("b/model.py"), Path("c/other.py"), Path("d/model.py")]
    assert names(scripts) == ["model", "model-2", "other", "model-3"]


@pytest.mark.parametrize("argv, line", [
    (["{tmp}/missing.py"], "no such script"),
    (["{corpus}/neg_uint8_model.py", "{corpus}/README.md"], "not a Python script"),
    (["--jobs", "0", "{corpus}/neg_uint8_model.py"], "--jobs 0"),
])
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, argv, line):
    argv = [a.format(tmp=tmp_path, corpus=ROOT / "corpus") for a in argv]
    assert main([*argv, "-o", str(tmp_path / "out")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert line in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()  # nothing written


def test_an_address_that_is_no_address_is_one_line_and_exit_2(tmp_path, capsys):
    pytest.importorskip("dask.distributed")
    script = str(ROOT / "corpus" / "neg_uint8_model.py")
    assert main([script, "--cluster", "no-port-here", "-q", "-o", str(tmp_path / "out")]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert "cannot reach the scheduler" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out" / "batch.json").exists()


def test_a_run_without_a_report_counts_no_bug(tmp_path):
    assert summary_row(tmp_path / "report.json") == {"bugs": 0, "ops_before": None, "ops_after": None,
                                                     "verified": False, "status": None}
    (tmp_path / "report.json").write_text('{"bugs": [{}], "ops_before": 9, "ops_after": 1, "verified": true, '
                                          '"status": "reproduced"}')
    assert summary_row(tmp_path / "report.json")["bugs"] == 1
