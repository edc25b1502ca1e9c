"""`minify versions` (issue 48): a repro's outcome under a torch judged by its own check, the
regression window in words, and commit bisection by overlaying torch's Python files onto the
installed build (a planted wrong constant in a copy of an installed torch/_inductor module)."""
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from minifier.versions.commits import bisect
from minifier.versions.outcome import CANNOT_RUN, DIFFERENT, PASSES, REPRODUCES, Expected, judge
from minifier.versions.run import VersionRun
from minifier.versions.window import window

# Lines real repros printed (minify's repro.py of corpus/real/issue_168358 and of the program
# repro of issue_194504, under torch 2.13.0 and 2.14.1).
RAISING = Expected(Path("."), "graph", "compile_error", "compile_error@inductor|AssertionError|")
ACCURACY = Expected(Path("."), "graph", "accuracy", "accuracy@inductor|meta")
PROGRAM = Expected(Path("."), "program", "program", "torch.compile raised where eager did not: UserError")
TRACEBACK = ('Traceback (most recent call last):\n  File "/tmp/x/repro.py", line 12, in <module>\n'
             '    torch.compile(f)(*make_inputs())\nAttributeError: module \'torch\' has no attribute \'index_reduce\'\n')


def test_a_raising_repro_reproduces_only_with_the_recorded_exception():
    assert judge(RAISING, 1, "REPRODUCED: AssertionError: \n", "")[0] == REPRODUCES
    outcome, why = judge(RAISING, 1, "REPRODUCED: NotImplementedError: could not find kernel for aten.foo\n", "")
    assert outcome == DIFFERENT and "NotImplementedError" in why and "AssertionError" in why


def test_a_traceback_or_a_crash_is_a_different_failure_never_reproduces():
    assert judge(ACCURACY, 1, "", TRACEBACK) == (DIFFERENT, "AttributeError: module 'torch' has no attribute "
                                                              "'index_reduce'")
    assert judge(ACCURACY, -11, "", "") == (DIFFERENT, "killed by SIGSEGV")
    assert judge(ACCURACY, 0, "", "")[0] == DIFFERENT  # exit 0 with no verdict line is no answer


def test_passes_and_cannot_run_are_the_repros_own_lines():
    assert judge(ACCURACY, 0, "NOT REPRODUCED: compiled matches eager\n", "")[0] == PASSES
    said = "CANNOT RUN: cannot load inputs.pt: RuntimeError: PytorchStreamReader failed\n"
    assert judge(ACCURACY, 2, said, "") == (CANNOT_RUN, said.strip())
    assert judge(ACCURACY, None, "", "")[0] == CANNOT_RUN


def test_a_program_repro_is_judged_by_its_checker_line():
    line = ("torch.compile raised where eager did not: UserError: Could not guard on data-dependent expression "
            "FloatTrueDiv(1.0, ToFloat(u0))")
    assert judge(PROGRAM, 1, "", f"W1127 warning\n{line}\n")[0] == REPRODUCES
    other = "torch.compile differs from eager: Tensor-likes are not close! Mismatched elements: 1 / 1"
    assert judge(PROGRAM, 1, "", other + "\n")[0] == DIFFERENT
    assert judge(PROGRAM, 0, "", "")[0] == PASSES


def rows(*pairs):
    return [VersionRun(v, v if o != CANNOT_RUN else None, o, "", 1.0) for v, o in pairs]


def test_the_window_in_words():
    fixed = window(rows(("2.14.1", PASSES), ("2.13.0", REPRODUCES)))  # given in any order
    assert (fixed.found, fixed.fixed_in, fixed.text) == (
        True, "2.14.1", "fails on 2.13.0, the oldest version tested that ran it; fixed in 2.14.1")
    since = window(rows(("2.11.0", PASSES), ("2.12.0", REPRODUCES), ("2.13.0", DIFFERENT), ("2.14.1", REPRODUCES)))
    assert since.text == "fails since 2.12.0 (passes on 2.11.0); still fails on 2.14.1; 2.13.0: different failure"
    assert (since.first_bad, since.last_good_before, since.still_fails_on) == ("2.12.0", "2.11.0", "2.14.1")
    both = window(rows(("2.10.0", PASSES), ("2.11.0", REPRODUCES), ("2.12.0", REPRODUCES), ("2.14.1", PASSES)))
    assert both.text == "fails since 2.11.0 (passes on 2.10.0); fixed in 2.14.1 (last failing: 2.12.0)"


def test_no_window_is_said_so():
    assert not window(rows(("2.13.0", PASSES), ("2.14.1", PASSES))).found
    alternating = window(rows(("2.11.0", REPRODUCES), ("2.12.0", PASSES), ("2.13.0", REPRODUCES)))
    assert not alternating.found and alternating.text.startswith("no single window")
    nothing = window(rows(("2.11", CANNOT_RUN), ("2.12", DIFFERENT)))
    assert not nothing.found and "no version tested could run it" in nothing.text


MODULE = "torch/_inductor/runtime/runtime_utils.py"
GOOD_LINE = "    return 1 << (n - 1).bit_length()"
REPRO = '''import sys
from torch._inductor.runtime.runtime_utils import next_power_of_2
if next_power_of_2(5) != 8:
    print(f"REPRODUCED: next_power_of_2(5) is {next_power_of_2(5)}, not 8")
    raise SystemExit(1)
print("NOT REPRODUCED: next_power_of_2(5) is 8")
'''


def _commit(repo: Path, message: str) -> str:
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", message], check=True)
    return subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.slow
def test_overlay_bisection_names_the_planted_commit(tmp_path):
    """A history of the installed torch's runtime_utils.py: one commit plants a wrong constant
    (and touches a native file), the others are harmless; the bisection names that commit."""
    repo, module = tmp_path / "pytorch", tmp_path / "pytorch" / MODULE
    module.parent.mkdir(parents=True)
    shutil.copy(Path(torch.__file__).parent / "_inductor" / "runtime" / "runtime_utils.py", module)
    assert GOOD_LINE in module.read_text()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    good = _commit(repo, "the installed torch's runtime_utils.py")
    with module.open("a") as f:
        f.write("\n# a comment\n")
    _commit(repo, "a comment")
    module.write_text(module.read_text().replace(GOOD_LINE, GOOD_LINE.replace("1 <<", "2 <<")))
    (repo / "aten" / "src").mkdir(parents=True)
    (repo / "aten" / "src" / "Next.cpp").write_text("int next_power_of_2(int n);\n")
    planted = _commit(repo, "next_power_of_2: shift 2")
    for n in range(2):
        (repo / f"NOTES{n}.md").write_text("notes\n")
        _commit(repo, f"notes {n}")
    folder = tmp_path / "repro"
    folder.mkdir()
    (folder / "repro.py").write_text(REPRO)
    expected = Expected(folder, "graph", "accuracy", "accuracy@inductor")
    found = bisect(expected, repo, good, "HEAD", Path(sys.executable), timeout=300, trees=("torch/_inductor",))
    assert found.found and found.first_bad == planted, found.text
    assert found.outside == ["aten/src/Next.cpp"] and "only its Python part" in found.text
    assert [s.outcome for s in found.steps[:2]] == [PASSES, REPRODUCES]  # the ends are checked first
    assert len(found.steps) <= 5
