"""`minify` on foreign programs (ordinary torch.compile programs not written for this tool, with
no bug in them, corpus/programs/): each ends in its expected answer, exit 3 and "Nothing failed",
with no traceback on the console and the user's script left as it was.

The fastest few run in every test run (marked `slow`, like the other end-to-end tests); all of
them run with `python -m pytest -m corpus tests/test_foreign_programs.py` (and, scored, with
`minify bench --all`)."""
import hashlib
import json

import pytest
from conftest import CORPUS, foreign_programs, run_minify

from minifier.bench import dynamo_graph_count

# The quickest programs (8-11 s each on 2 shared cores), three different shapes: autocast, a
# compiled preprocessing function with the decorator, BatchNorm mutating buffers in train mode.
EVERY_RUN = ("autocast_bf16", "preprocess", "cnn_batchnorm_train")


def by_name(name: str) -> dict:
    return next(c for c in foreign_programs() if c["name"] == name)


def check_nothing_failed(case: dict, tmp_path) -> None:
    script = CORPUS / case["script"]
    before = hashlib.sha256(script.read_bytes()).hexdigest()
    out = tmp_path / "out"
    proc = run_minify([str(script), "-o", str(out)], cwd=tmp_path)
    console = proc.stdout + proc.stderr
    assert proc.returncode == case["expect_exit"] == 3, console[-3000:]
    assert "Nothing failed" in console, console[-3000:]
    assert "Traceback" not in console, console[-3000:]
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "nothing_failed"
    assert dynamo_graph_count(report) == case["graphs"]
    assert hashlib.sha256(script.read_bytes()).hexdigest() == before
    assert not (CORPUS / "programs" / "minify-out").exists() and not (CORPUS / "minify-out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("name", EVERY_RUN)
def test_fast_foreign_program_ends_in_nothing_failed(name, tmp_path):
    check_nothing_failed(by_name(name), tmp_path)


@pytest.mark.slow
@pytest.mark.corpus
@pytest.mark.parametrize("case", [pytest.param(c, id=c["name"]) for c in foreign_programs()])
def test_every_foreign_program_ends_in_its_expected_answer(case, tmp_path):
    check_nothing_failed(case, tmp_path)
