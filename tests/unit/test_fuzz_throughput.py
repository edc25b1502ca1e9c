"""`minify fuzz throughput` (issue 50): worker counts are checked before anything starts, and the
table's rate and speedup are read from each shard's own counts."""
from __future__ import annotations

import argparse

import pytest

from minifier.exit_codes import EXIT_BAD_INPUT
from minifier.fuzz.throughput import counts, main, markdown, threads_of, usable_cores


def test_worker_counts():
    assert counts("1,4,8") == [1, 4, 8] and counts("2") == [2]
    for bad in ("", "0,4", "a", "-1"):
        with pytest.raises(ValueError, match="--workers"):
            counts(bad)


def test_bad_counts_are_one_line_and_exit_2(tmp_path, capsys):
    assert main(["--workers", "0", "-o", str(tmp_path / "tp")]) == EXIT_BAD_INPUT
    assert "--workers 0" in capsys.readouterr().err and not (tmp_path / "tp").exists()


def test_the_speedup_is_against_one_worker():
    rows = [{"workers": 1, "threads": 8, "examples": 30, "checked": 33, "answered": 1, "wall": 100.0, "per_minute": 20.0},
            {"workers": 4, "threads": 2, "examples": 100, "checked": 117, "answered": 4, "wall": 101.0,
             "per_minute": 70.0}]
    table = markdown(rows, argparse.Namespace(seconds=90.0, seed=7, unit_examples=2), ["--ops", "neg"])
    assert "| 4 | 2 | 100 | 117 | 4/4 | 101.0 | 70.0 | 3.50x |" in table and "--ops neg" in table
    assert "--unit-examples 2" in table


def test_bad_unit_examples_are_one_line_and_exit_2(tmp_path, capsys):
    assert main(["--unit-examples", "0", "-o", str(tmp_path / "tp")]) == EXIT_BAD_INPUT
    assert "--unit-examples 0" in capsys.readouterr().err and not (tmp_path / "tp").exists()


def test_every_row_gets_the_same_threads_per_worker_unless_auto():
    assert threads_of(None, [1, 4, 8]) == max(1, usable_cores() // 8)
    assert threads_of("3", [1, 4]) == 3 and threads_of("auto", [1, 4]) is None
    for bad in ("0", "x", "-2"):
        with pytest.raises(ValueError, match="--threads"):
            threads_of(bad, [1])


def test_a_warm_up_or_row_of_no_time_is_one_line_and_exit_2(tmp_path, capsys):
    for flag in ("--warm-seconds", "--seconds"):
        assert main([flag, "0", "-o", str(tmp_path / "tp")]) == EXIT_BAD_INPUT
        assert "must be greater than zero" in capsys.readouterr().err and not (tmp_path / "tp").exists()
