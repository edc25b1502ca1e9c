"""Commit-level bisection where the change is in Python: between a good and a bad commit of a
PyTorch source checkout, overlay each tested commit's compiler trees onto the installed build
(minifier.versions.overlay) and run the repro, halving the range as `git bisect` does. A commit
whose overlay cannot run the repro (it cannot import, it fails differently) is skipped, and the
answer is then the range that could not be narrowed. A first bad commit that also changes files
the overlay does not carry (native code) is named with them: only its Python part was tested."""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minifier.versions.outcome import PASSES, REPRODUCES, Expected
from minifier.versions.overlay import TREES, boot_folder, extract, git, overlay_env
from minifier.versions.run import run_repro

NOT_CODE = ("test/", "docs/", ".github/", "benchmarks/", ".ci/")


@dataclass
class Step:
    commit: str
    subject: str
    outcome: str
    why: str
    seconds: float


@dataclass
class Bisection:
    found: bool
    text: str
    first_bad: str | None = None
    candidates: list[str] = field(default_factory=list)  # the range left when commits were skipped
    outside: list[str] = field(default_factory=list)  # files of first_bad the overlay does not carry
    steps: list[Step] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def commit_range(checkout: Path, good: str, bad: str) -> list[str]:
    """The commits after `good` up to `bad`, oldest first; ValueError in one line."""
    shas = []
    for name, commit in (("--good", good), ("--bad", bad)):
        try:
            shas.append(git(checkout, "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}").strip())
        except ValueError:
            raise ValueError(f"{name} {commit}: no such commit in {checkout}") from None
    good_sha, bad_sha = shas
    commits = git(checkout, "rev-list", "--reverse", "--ancestry-path", f"{good_sha}..{bad_sha}").split()
    if not commits:
        raise ValueError(f"--bad {bad} is not a later commit than --good {good} (no commits between them)")
    return commits


def outside_trees(checkout: Path, commit: str, trees: tuple[str, ...] = TREES) -> list[str]:
    """The files `commit` changes that the overlay does not carry (native code, other Python)."""
    changed = git(checkout, "diff-tree", "--no-commit-id", "--name-only", "-r", "--root", commit).split()
    return [p for p in changed if not any(p == t or p.startswith(t + "/") for t in trees)
            and not p.startswith(NOT_CODE) and not p.endswith((".md", ".rst"))]


def bisect(expected: Expected, checkout: Path, good: str, bad: str, python: Path, timeout: float,
           trees: tuple[str, ...] = TREES, say=lambda s: None) -> Bisection:
    commits = commit_range(checkout, good, bad)
    good_sha = git(checkout, "rev-parse", f"{good}^{{commit}}").strip()
    steps: list[Step] = []
    with tempfile.TemporaryDirectory(prefix="minify-overlay-") as scratch:
        boot = boot_folder(Path(scratch) / "boot")

        def test(commit: str) -> str:
            folder = extract(checkout, commit, Path(scratch) / commit[:12], trees)
            outcome, why, seconds = run_repro(expected, python, timeout, overlay_env(boot, folder))
            shutil.rmtree(folder, ignore_errors=True)
            subject = git(checkout, "log", "-1", "--format=%s", commit).strip()
            steps.append(Step(commit, subject, outcome, why, seconds))
            say(f"{commit[:12]} {outcome:<17} {seconds:5.1f}s  {subject[:60]}")
            return outcome

        ends = {"--good": (good_sha, PASSES), "--bad": (commits[-1], REPRODUCES)}
        for name, (commit, wanted) in ends.items():
            got = test(commit)
            if got != wanted:
                return Bisection(False, f"{name} {commit[:12]}: the repro {got} there with the overlay "
                                 f"({steps[-1].why}), not {wanted}: no bisection", steps=steps)
        lo, hi, skipped = -1, len(commits) - 1, set()
        while hi - lo > 1:
            left = [i for i in range(lo + 1, hi) if i not in skipped]
            if not left:
                break
            mid = min(left, key=lambda i: abs(i - (lo + hi) / 2))
            outcome = test(commits[mid])
            if outcome == REPRODUCES:
                hi = mid
            elif outcome == PASSES:
                lo = mid
            else:
                skipped.add(mid)
    return _answer(checkout, commits, lo, hi, steps, trees)


def _answer(checkout: Path, commits: list[str], lo: int, hi: int, steps: list[Step], trees) -> Bisection:
    tested = len(steps)
    if hi - lo == 1:
        first = commits[hi]
        subject = git(checkout, "log", "-1", "--format=%s", first).strip()
        outside = outside_trees(checkout, first, trees)
        text = f"first bad commit: {first[:12]} {subject} ({tested} runs over {len(commits)} commits)"
        if outside:
            text += (f"; it also changes {len(outside)} file(s) the overlay does not carry ({', '.join(outside[:3])}"
                     f"{', ...' if len(outside) > 3 else ''}): only its Python part in the trees was tested")
        return Bisection(True, text, first, [first], outside, steps)
    left = commits[lo + 1:hi + 1]
    text = (f"the first bad commit is one of {len(left)}: {left[0][:12]}..{left[-1][:12]} (the commits between "
            f"could not be tested with the overlay: it fails differently or cannot import there)")
    return Bisection(False, text, None, left, [], steps)
