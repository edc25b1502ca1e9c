"""A campaign that splits and findings that live (issue 50): `--shard I/N` shares out a
campaign's units with nothing left out or run twice; a finding's id depends on the bug, not on
where or when it was seen; `fuzz merge` keeps one record per id; known findings are not new;
known issues are masked by name; `fuzz recheck` marks each saved finding still-failing or fixed."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

from conftest import ROOT, run_minify
from minifier.fuzz.campaign import FuzzOptions
from minifier.fuzz.drawn_program import Program, Ref, Step
from minifier.fuzz.failures import Failure, Masks
from minifier.fuzz.finding_id import id_of, id_of_row
from minifier.fuzz.known import KnownIssueMasks, load_known_issues, record_campaign
from minifier.fuzz.merge import main as merge_main
from minifier.fuzz.records import load
from minifier.fuzz.shard import Shard, parse_shard, shard_units, units

NEG = ["--ops", "abs,neg", "--dtypes", "float32", "--inject", "neg:accuracy:double", "--no-reduce", "-q", "--seed",
       "0", "--max-examples", "6", "--unit-examples", "3", "--backward", "0", "--mask", "accuracy@inductor|signed_zero"]


@pytest.mark.parametrize("budget", [7, 40, 41])
@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_shards_share_out_every_unit_once(budget, count):
    whole = list(units(123, budget, 10))
    shares = [list(shard_units(123, budget, Shard(i, count), 10)) for i in range(1, count + 1)]
    numbers = sorted(u.number for share in shares for u in share)
    assert numbers == [u.number for u in whole]  # every unit, none twice
    assert sorted((u for share in shares for u in share), key=lambda u: u.number) == whole  # same seeds, budgets
    assert sum(u.examples for u in whole) == budget
    assert len({u.seed for u in whole}) == len(whole)
    endless = [list(zip(range(4), shard_units(5, 10**9, Shard(i, count)))) for i in range(1, count + 1)]
    assert len({u.number for share in endless for _, u in share}) == 4 * count  # with no end, still disjoint


def test_bad_shards_are_one_line_errors():
    assert parse_shard("2/3") == Shard(2, 3)
    for bad in ("0/2", "3/2", "a/b", "2", "1/0"):
        with pytest.raises(ValueError, match="--shard"):
            parse_shard(bad)


def neg_failure(dtype=torch.float32, ops=("neg",)) -> tuple[Failure, dict]:
    steps = [Step(op, f"torch.{op}", [Ref("x0")], {}, f"v{i}") for i, op in enumerate(ops)]
    program = Program({"x0": torch.arange(-2, 3, dtype=dtype)}, steps)
    failure = Failure("accuracy@inductor", "accuracy", "out[0] differs", list(ops), program, 3, "values",
                      str(dtype).replace("torch.", ""))
    from minifier.fuzz.command import failure_row
    return failure, failure_row(1, failure)


def test_a_findings_id_is_the_bug_not_the_sighting():
    failure, row = neg_failure()
    again = {**row, "message": "another message", "example": 99, "number": 7, "suspects": ["neg"]}
    assert id_of(failure) == id_of_row(row) == id_of_row(again)
    assert id_of_row({**row, "suspects": ["neg", "abs"]}) == id_of_row({**row, "suspects": ["abs", "neg"]})
    for other in ({"dtype": "float64"}, {"rung": "nan_inf"}, {"signature": "accuracy@inductor|nan_inf"},
                  {"suspects": ["abs"]}, {"gradient": "grad[x0]"}, {"kind": "crash"}):
        assert id_of_row({**row, **other}) != id_of_row(row), other
    assert id_of_row({**row, "gradient": "grad[x0]"}) == id_of_row({**row, "gradient": "grad[x1]"})


def test_a_known_finding_is_not_new_and_keeps_its_first_sighting(tmp_path):
    failure, row = neg_failure()
    opts = FuzzOptions(out=tmp_path / "a", seed=1)
    opts.out.mkdir()
    first = record_campaign(opts, [failure], [dict(row)])
    ident = id_of(failure)
    assert first["new"] == [ident] and (opts.out / "findings" / ident / "check" / "check.json").is_file()
    born = load(opts.out)[ident]["first_seen"]
    second = record_campaign(FuzzOptions(out=opts.out, seed=2), [failure], [dict(row)])  # the same folder again
    assert second["new"] == [] and second["still_failing"] == [ident]
    record = load(opts.out)[ident]
    assert record["status"] == "still-failing" and record["first_seen"] == born
    assert record["seen_in"] == ["seed 1", "seed 2"]
    elsewhere = FuzzOptions(out=tmp_path / "b", known=[opts.out / "findings.json"])  # --known RECORD
    elsewhere.out.mkdir()
    assert record_campaign(elsewhere, [failure], [dict(row)])["still_failing"] == [ident]
    wider, wider_row = neg_failure(torch.float64)
    assert record_campaign(elsewhere, [wider], [wider_row])["new"] == [id_of(wider)]  # another dtype: new


def test_known_issues_mask_findings_by_name(tmp_path):
    failure, row = neg_failure()
    ident = id_of(failure)
    (tmp_path / "issues.json").write_text(json.dumps({ident: "https://github.com/pytorch/pytorch/issues/1"}))
    (tmp_path / "issues.toml").write_text(f'[issues]\n"{ident}" = "https://github.com/pytorch/pytorch/issues/1"\n')
    assert load_known_issues(tmp_path / "issues.json") == load_known_issues(tmp_path / "issues.toml")
    (tmp_path / "bad.json").write_text("[1, 2]")
    with pytest.raises(ValueError, match="issue URLs"):
        load_known_issues(tmp_path / "bad.json")
    issues = load_known_issues(tmp_path / "issues.json")
    masks = KnownIssueMasks(Masks(), issues, {})
    assert masks.matches(failure) and not Masks().matches(failure)
    longer, _ = neg_failure(ops=("abs", "neg"))  # before shrinking: more ops around it, another id
    assert not masks.matches(longer)
    record = {"signature": row["signature"], "ops": ["neg"], "dtype": "float32", "gradient": None}
    assert KnownIssueMasks(Masks(), issues, {ident: record}).matches(longer)  # known from its record
    other, _ = neg_failure(torch.float64)
    assert not KnownIssueMasks(Masks(), issues, {ident: record}).matches(other)


def write_record(folder, records):
    from minifier.fuzz.records import write

    folder.mkdir(parents=True)
    for ident in records:
        (folder / "findings" / ident / "check").mkdir(parents=True)
        (folder / "findings" / ident / "check" / "check.json").write_text(json.dumps({"from": str(folder)}))
    write(folder, records)


def test_merge_keeps_one_record_per_id(tmp_path, capsys):
    from rich.console import Console

    def rec(ident, seen, where):
        return {"id": ident, "signature": "s", "key": ident, "first_seen": seen, "last_seen": seen,
                "seen_in": [where], "status": "new", "verified": None, "issue": None}

    write_record(tmp_path / "s1", {"f-a": rec("f-a", "2026-01-02", "shard 1/2"), "f-b": rec("f-b", "2026-01-01", "1/2")})
    write_record(tmp_path / "s2", {"f-a": rec("f-a", "2026-01-01", "shard 2/2"), "f-c": rec("f-c", "2026-01-03", "2/2")})
    console = Console(file=sys.stdout, width=1000)
    assert merge_main([str(tmp_path / "s1"), str(tmp_path / "s2"), "-o", str(tmp_path / "m")], console, console) == 0
    merged = load(tmp_path / "m")
    assert sorted(merged) == ["f-a", "f-b", "f-c"]
    assert merged["f-a"]["first_seen"] == "2026-01-01" and merged["f-a"]["last_seen"] == "2026-01-02"
    assert merged["f-a"]["seen_in"] == ["shard 1/2", "shard 2/2"]
    assert all((tmp_path / "m" / "findings" / i / "check" / "check.json").is_file() for i in merged)
    before = (tmp_path / "m" / "findings.json").read_text()
    assert merge_main([str(tmp_path / "s2"), "-o", str(tmp_path / "m")], console, console) == 0  # again: no change
    assert load(tmp_path / "m") == json.loads(before)["findings"]
    (tmp_path / "junk.json").write_text("{}")
    assert merge_main([str(tmp_path / "junk.json"), "-o", str(tmp_path / "n")], console, console) == 2
    (tmp_path / "m" / "mine.txt").write_text("the user's")
    assert merge_main([str(tmp_path / "s1"), "-o", str(tmp_path / "m")], console, console) == 2
    assert "not a finding record" in capsys.readouterr().out and not (tmp_path / "n").exists()


@pytest.mark.e2e
def test_two_shards_merge_and_recheck_marks_still_failing_then_fixed(tmp_path):
    """Two shards of a real campaign (a planted neg bug) run side by side, merge by id, and
    recheck replays the merged finding: still failing, and fixed once the bug is gone (the
    plant taken out of its saved check, as a torch with the bug fixed would compile it)."""
    import os

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    shards = [subprocess.Popen([sys.executable, "-m", "minifier", "fuzz", *NEG, "--shard", f"{i}/2", "-o",
                                str(tmp_path / f"s{i}")], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True) for i in (1, 2)]
    outputs = [p.communicate(timeout=600)[0] for p in shards]
    assert [p.returncode for p in shards] == [1, 1], outputs
    runs = [json.loads((tmp_path / f"s{i}" / "fuzz.json").read_text()) for i in (1, 2)]
    assert [r["units"] for r in runs] == [[0], [1]] and sum(r["examples"] for r in runs) == 6
    merged = run_minify(["fuzz", "merge", str(tmp_path / "s1"), str(tmp_path / "s2"), "-o", str(tmp_path / "m")],
                        cwd=tmp_path)
    assert merged.returncode == 0, merged.stderr
    records = load(tmp_path / "m")
    assert [r["key"] for r in records.values()] == ["accuracy@inductor [neg]"], records
    ident, = records
    assert records[ident]["seen_in"] == ["seed 0 shard 1/2", "seed 0 shard 2/2"]
    again = run_minify(["fuzz", "recheck", str(tmp_path / "m")], cwd=tmp_path)
    assert again.returncode == 1 and load(tmp_path / "m")[ident]["status"] == "still-failing", again.stderr
    check = tmp_path / "m" / "findings" / ident / "check" / "check.json"
    check.write_text(json.dumps({**json.loads(check.read_text()), "injections": []}))
    fixed = run_minify(["fuzz", "recheck", str(tmp_path / "m")], cwd=tmp_path)
    record = load(tmp_path / "m")[ident]
    assert fixed.returncode == 0 and record["status"] == "fixed", fixed.stderr
    assert record["fixed_in"] == torch.__version__ and "1 fixed" in fixed.stdout
