"""Reduce a whole program, with the program itself as the oracle.

The program is first instrumented (minifier.program.instrument) so that one run answers
whether it still fails the same way. Passes (minifier.program.source_passes) propose
candidates in a fixed order; `jobs` of them run side by side and the first that holds, in
order, is taken (minifier.reduce.delta_core, C-Vise's rule: the result equals the sequential
one, whatever `jobs` is).
Each pass runs until it finds nothing, and the passes repeat until a round changes nothing.
Every candidate's text is cached with its answer, so a program is never run twice.
"""
from __future__ import annotations

import ast
import hashlib
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from compiler.judging import Judging
from minifier.program.instrument import RunResult, program_lines, project_statements, render, run_program
from minifier.program.source_passes import PASSES
from minifier.reduce.delta_core import first_in_order, side_by_side


@dataclass
class Oracle:
    """Runs candidates in `folder` and says whether each fails with `signature`."""
    folder: Path
    cwd: Path
    signature: str
    timeout: float
    extra_path: list[str] = field(default_factory=list)
    zygote: object = None  # a warm Zygote to fork candidates from, or None for fresh interpreters
    mode: str = "check"  # "check": each compiled call judges itself; "plain": the program fails, eager does not
    judging: Judging = Judging()  # how a checked call judges (minifier.program.instrument.prologue_of)
    answers: dict[str, bool] = field(default_factory=dict)
    runs: int = 0

    pinned: list[str] = field(default_factory=list)  # ast.dump of the statements that plant the bug

    def holds(self, tree: ast.Module) -> bool:
        if [ast.dump(s) for s in project_statements(tree)] != self.pinned:
            return False  # the verifier: a candidate that changes how the bug is planted never runs
        text = render(tree, self.mode, self.judging)
        key = hashlib.sha256(text.encode()).hexdigest()[:16]
        if key not in self.answers:
            self.answers[key] = holds(self._run(text, key), self.signature, self.mode,
                                      lambda: self._run(render(tree, "eager"), key + "_eager"))
        return self.answers[key]

    def _run(self, text: str, name: str) -> RunResult:
        path = self.folder / f"candidate_{name}.py"
        path.write_text(text)
        self.runs += 1
        return run_program(path, self.cwd, self.timeout, self.extra_path, self.zygote)


def holds(compiled: RunResult, signature: str, mode: str, control: Callable[[], RunResult]) -> bool:
    """A candidate holds when compiled it fails with `signature` and, in `plain` mode, its
    control run with nothing compiled passes: one that fails there too (a NameError from a
    deleted line, an unconditional `sys.exit(1)`) shows the candidate's own breakage, not the
    bug. In `check` mode each compiled call already runs eagerly first, on copies of its inputs."""
    if compiled.signature_in(mode) != signature:
        return False
    return mode == "check" or control().passed


@dataclass
class Reduction:
    tree: ast.Module
    lines_before: int
    lines_after: int
    runs: int
    seconds: float
    passes: dict[str, dict]  # per pass: candidates tried and taken
    complete: bool  # False when the run limit or the time limit stopped it


def size(tree: ast.Module) -> tuple[int, int]:
    """What "smaller" means (Hypothesis's sort_key): fewer syntax nodes, then smaller int literals.
    Only a strictly smaller candidate is tried, so no pass can loop on an equal one."""
    nodes = list(ast.walk(tree))
    return len(nodes), sum(abs(n.value) for n in nodes if isinstance(n, ast.Constant) and type(n.value) is int)


def first_holding(candidates: Iterator[ast.Module], oracle: Oracle, jobs: int,
                  current: tuple[int, int] = (2 ** 62, 0)) -> tuple[ast.Module | None, int]:
    """The first candidate (in order) that is smaller than `current` and holds, trying `jobs`
    at a time; and how many were tried."""
    smaller = (c for c in candidates if size(c) < current)
    with ThreadPoolExecutor(max(jobs, 1)) as pool:
        found = first_in_order(smaller, side_by_side(oracle.holds, pool), jobs)
    return found.candidate, found.tried


def reduce_program(tree: ast.Module, oracle: Oracle, jobs: int = 2, max_runs: int = 3000, max_seconds: float = 600,
                   say: Callable[[str], None] = lambda s: None) -> Reduction:
    start, before = time.perf_counter(), program_lines(tree)
    stats = {p.name: {"tried": 0, "taken": 0} for p in PASSES}
    out_of_budget = lambda: oracle.runs >= max_runs or time.perf_counter() - start > max_seconds
    changed = True
    while changed and not out_of_budget():
        changed = False
        for p in PASSES:
            while not out_of_budget():
                found, tried = first_holding(p.candidates(tree), oracle, jobs, size(tree))
                stats[p.name]["tried"] += tried
                if found is None:
                    break
                tree, changed = found, True
                stats[p.name]["taken"] += 1
                say(f"  {p.name}: {program_lines(tree)} lines left")
    return Reduction(tree, before, program_lines(tree), oracle.runs, round(time.perf_counter() - start, 2), stats,
                     complete=not out_of_budget())
