"""`minify bench --scale`: does a run's cost track the script's own run as the model grows?

For each size, a residual MLP of that many blocks (LayerNorm, Linear, GELU, Linear; the middle
block's activation is relu, which Inductor's relu test knob mis-generates: one wrong op in a
graph of 5 ops a block) is written out as a user script and timed three ways, each on the same
Inductor cache that one untimed run of the script filled (as a user's is when they reach for a
minifier): the script alone, `minify` on it, and with --vs-builtin PyTorch's built-in minifier
at the sizes asked. Per size the table shows those times, minify's compiles and the time of
each of its phases (from report.json), the answer (culprit op, ops left, verified) scored as
the corpus is, and the peak memory of each process tree (minifier.bench.memory).
"""
from __future__ import annotations

import json
import shutil
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

from minifier.bench.builtin import run_builtin
from minifier.bench.cases import project_env, seeded_cache
from minifier.bench.memory import run_measured
from minifier.bench.score import score
from minifier.phases import ORDER

SIZES = (4, 16, 48, 96, 192)
BUILTIN_SIZES = (48,)
TARGET_RATIO = 1.5  # whole run / script alone, at every size (issue 25)
TARGET_VS_BUILTIN = 0.5  # whole run / built-in's, at 48 blocks

MODEL = '''"""Residual MLP of {blocks} blocks (LayerNorm, Linear, GELU, Linear); the middle block's
activation is relu, which Inductor's C++ backend mis-generates (its relu test knob): one wrong
op in the graph. Written by `minify bench --scale`."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch._inductor.config.cpp.inject_relu_bug_TESTING_ONLY = "accuracy"


class Block(nn.Module):
    def __init__(self, dim, act):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)
        self.act = act

    def forward(self, x):
        return x + self.fc2(self.act(self.fc1(self.norm(x))))


class ResidualMLP(nn.Module):
    def __init__(self, blocks, dim=64):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, torch.relu if i == blocks // 2 else F.gelu)
                                    for i in range(blocks))
        self.head = nn.Linear(dim, 10)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def main():
    torch.manual_seed(0)
    model = ResidualMLP({blocks}).eval()
    x = torch.randn({rows}, 64)
    with torch.no_grad():
        expected = model(x)
        got = torch.compile(model)(x)
    print("max abs difference from eager:", (got - expected).abs().max().item())


if __name__ == "__main__":
    main()
'''


def case_for(blocks: int, script: Path) -> dict:
    """The size's known answer, in the corpus manifest's terms (so `score` judges it)."""
    return {"name": f"scale_mlp{blocks}", "script": str(script), "kind": "accuracy", "graphs": 1, "graph_index": 0,
            "stage": "inductor", "culprit_ops": ["relu"], "min_ops": 1, "device": "cpu", "dtype": "float32"}


@dataclass
class ScaleRow:
    blocks: int
    rows: int = 32  # the input batch's rows: the activations grow with them
    script_seconds: float | None = None
    script_peak_mib: float | None = None
    minify_seconds: float | None = None
    minify_peak_mib: float | None = None
    script_held_mib: float | None = None  # of the peak, what the kernel could not drop (memory.tree_memory_mib)
    minify_held_mib: float | None = None
    to_repro: float | None = None
    exit_code: int | None = None
    correct: bool = False
    ops_before: int | None = None
    ops_after: int | None = None
    ops: list = field(default_factory=list)
    compiles: int | None = None
    phases: dict = field(default_factory=dict)
    builtin: dict | None = None
    note: str = ""

    @property
    def ratio(self) -> float | None:
        return self.minify_seconds / self.script_seconds if self.minify_seconds and self.script_seconds else None

    @property
    def vs_builtin(self) -> float | None:
        b = (self.builtin or {}).get("seconds")
        return self.minify_seconds / b if b and self.minify_seconds else None


def run_size(blocks: int, out: Path, jobs: int, timeout: float, builtin: bool, no_isolate: bool,
             rows: int = 32) -> ScaleRow:
    """One size: write the script, fill its cache, time the script, minify and (if asked) the built-in."""
    folder = out / (f"mlp{blocks}" if rows == 32 else f"mlp{blocks}x{rows}")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    script = folder / f"mlp{blocks}.py"
    script.write_text(MODEL.format(blocks=blocks, rows=rows))
    case = case_for(blocks, script)
    cache = seeded_cache(case, folder / "cache", timeout)
    env = {**project_env(), **cache}
    row = ScaleRow(blocks, rows)
    code, row.script_seconds, peaks = run_measured([sys.executable, str(script)], folder, env, timeout,
                                                   folder / "script.log")
    row.script_peak_mib, row.script_held_mib = peaks or (None, None)
    if code != 0:
        row.note = f"the script exited {code}"
        return row
    minify_out = folder / "minify-out"
    cmd = [sys.executable, "-m", "minifier", str(script), "-o", str(minify_out), "-q", "-j", str(jobs)]
    row.exit_code, row.minify_seconds, peaks = run_measured(cmd, folder, env, timeout, folder / "minify.log")
    row.minify_peak_mib, row.minify_held_mib = peaks or (None, None)
    _read_answer(row, case, minify_out, folder / "minify.log")
    if builtin:
        row.builtin = run_builtin(case, folder, [], no_isolate, timeout, cache)
    return row


def _read_answer(row: ScaleRow, case: dict, out: Path, log: Path) -> None:
    scored = score(case, row.exit_code, row.minify_seconds or 0.0, out, log.read_text())
    row.correct, row.to_repro, row.compiles = scored.correct, scored.to_repro, scored.compiles
    row.ops_after, row.ops, row.note = scored.ops_after, scored.ops, scored.note
    report = out / "report.json"
    if report.exists():
        data = json.loads(report.read_text())
        row.phases, row.ops_before = data.get("phases", {}), data.get("ops_before")


def verdict(rows: list[ScaleRow]) -> list[str]:
    """The issue's targets, each as a line saying whether it held."""
    lines = []
    ratios = [(r.blocks, r.ratio) for r in rows if r.ratio]
    if ratios:
        worst = max(ratios, key=lambda br: br[1])
        held = all(ratio <= TARGET_RATIO for _, ratio in ratios) and len(ratios) == len(rows)
        lines.append(f"whole run / script alone: at most {worst[1]:.2f}x (at {worst[0]} blocks); target "
                     f"{TARGET_RATIO}x at every size: {'met' if held else 'NOT met'}")
    for r in rows:
        if r.vs_builtin:
            lines.append(f"whole run / built-in at {r.blocks} blocks: {r.vs_builtin:.2f}x; target "
                         f"{TARGET_VS_BUILTIN}x: {'met' if r.vs_builtin <= TARGET_VS_BUILTIN else 'NOT met'}")
    wrong = [r.blocks for r in rows if not r.correct]
    lines.append("answers: relu, one op, verified at every size" if not wrong else
                 f"answers WRONG at {', '.join(map(str, wrong))} blocks")
    return lines


def print_scale_table(rows: list[ScaleRow], console) -> None:
    from rich.table import Table

    table = Table(title="minify bench --scale (residual MLP, relu mis-generated in the middle block)")
    seen = {p for r in rows for p in r.phases}
    phase_names = [p for p in ORDER if p in seen] + sorted(seen - set(ORDER))  # in pipeline order
    for col in ["blocks", "graph ops", "script s", "minify s", "ratio", "to repro s", "built-in s", "vs built-in",
                "compiles", *[f"{p} s" for p in phase_names], "answer", "peak MiB script/minify (held)"]:
        table.add_column(col, overflow="fold")
    for r in rows:
        b = r.builtin or {}
        answer = (f"{'[green]' if r.correct else '[red]'}{r.ops_before or '?'}->{r.ops_after}: "
                  f"{','.join(r.ops)}{'[/green]' if r.correct else ' ' + r.note + '[/red]'}")
        table.add_row(str(r.blocks), str(r.ops_before or "-"), _num(r.script_seconds), _num(r.minify_seconds),
                      f"{r.ratio:.2f}x" if r.ratio else "-", _num(r.to_repro),
                      f"{_num(b.get('seconds'))} ({b.get('queries', '-')} queries)" if b else "-",
                      f"{r.vs_builtin:.2f}x" if r.vs_builtin else "-", str(r.compiles or "-"),
                      *[_num(r.phases.get(p)) for p in phase_names], answer,
                      f"{_num(r.script_peak_mib, 0)}/{_num(r.minify_peak_mib, 0)} "
                      f"({_num(r.script_held_mib, 0)}/{_num(r.minify_held_mib, 0)})")
    console.print(table)
    for line in verdict(rows):
        console.print(line, highlight=False)


def _num(value, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def main_scale(ns, console) -> int:
    """--scale: every size in turn, results written after each (a long run cut short keeps them)."""
    sizes = ns.sizes or SIZES
    builtin_sizes = set(ns.builtin_sizes or BUILTIN_SIZES) if ns.vs_builtin else set()
    out = ns.out.resolve() / "scale"
    rows: list[ScaleRow] = []
    for blocks in sizes:
        console.print(f"scale: {blocks} blocks ...", highlight=False)
        rows.append(run_size(blocks, out, ns.jobs, ns.timeout, blocks in builtin_sizes, ns.no_isolate,
                             ns.rows or 32))
        r = rows[-1]
        console.print(f"    script {_num(r.script_seconds)} s, minify {_num(r.minify_seconds)} s "
                      f"({'correct' if r.correct else 'WRONG ' + r.note})", highlight=False)
        _write_json(ns.json.resolve().with_name("scale.json"), rows)
    print_scale_table(rows, console)
    return 0 if all(r.correct for r in rows) else 1


def _write_json(path: Path, rows: list[ScaleRow]) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"torch": torch.__version__, "fx_graph_cache": "off (minifier.bench.cases.project_env)",
                                "verdict": verdict(rows),
                                "sizes": [asdict(r) | {"ratio": r.ratio, "vs_builtin": r.vs_builtin} for r in rows]},
                               indent=1))
