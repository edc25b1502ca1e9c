"""`minify versions` on real corpus reports across torch 2.13.0 (this Python) and 2.14.1 (a
cached venv: `minify versions ... --torch 2.14` makes it once, about 4 GB). Marked `versions`:
kept out of the default run, skipped where no 2.14.1 venv is cached (a test never installs one)."""
import json

import pytest

from conftest import CORPUS, run_minify
from minifier.versions.venvs import cached

pytestmark = pytest.mark.versions

# corpus/real case -> the window across 2.13 and 2.14 (issue 48)
CASES = {
    "issue_168358_index_reduce_amax_backward": "fixed in 2.14.1",  # the C++ backend's assert, gone in 2.14.1
    "issue_189518_cumsum_dtype_dropped": "fixed in 2.14.1",  # cumsum's dtype= kept in 2.14.1
    "issue_194504_batchnorm_momentum_none_fullgraph": "still fails on 2.14.1",  # a program repro
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_window_across_2_13_and_2_14(case, tmp_path):
    if cached("2.14") is None:
        pytest.skip("no cached torch 2.14 venv (minify versions makes one: --torch 2.14)")
    out = tmp_path / case
    done = run_minify([str(CORPUS / "real" / f"{case}.py"), "-o", str(out)], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    done = run_minify(["versions", str(out), "--torch", "2.13,2.14"], tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    report = json.loads((out / "report.json").read_text())["versions"]
    assert CASES[case] in report["window"]["text"]
    assert [r["outcome"] for r in report["runs"]][0] == "reproduces"  # 2.13.0, where it was recorded
    assert "Regression window" in (out / "issue.md").read_text()
