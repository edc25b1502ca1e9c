"""When every compiled graph matches eager on its own but the program still fails.

End-to-end check (sound by construction): the program fails if, compiled, it raises, exits
non-zero or dies where the same script run with nothing compiled does not; or if the first
outputs of one of its torch.compile'd functions differ (by the oracle's tolerances) from the
same function's first outputs in the run with nothing compiled. Each run starts the script
from scratch, so neither run can disturb the other's state; a second eager run must agree
with the first, or the script itself is not deterministic and outputs prove nothing.

Then a subset search: rerun the script compiling only some graphs (`--only`: the others
run eagerly) and find a 1-minimal set of graphs that must all be compiled for the same
failure to appear (ddmin over graph keys: minifier.reduce.delta_core). The report names the graphs; the repro then comes
from reducing the program as a whole (minifier.program.program_repro).
"""
from __future__ import annotations

import re
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

import torch

from minifier.capture.process import Capture, run_capture
from minifier.reduce.delta_core import ddmin, one_at_a_time
from compiler.launch_form import Launch
from compiler.judging import Judging
from compiler.oracle import compare, flatten
from compiler.signature import program_signature

ROOT = Path(__file__).resolve().parents[2]
OWN = tuple(str(ROOT / package) + "/" for package in ("compiler", "minifier", "repro"))  # never the user's code
MAX_RUNS = 48


@dataclass
class EndToEnd:
    how: str  # "script": raises/exits/dies only compiled; "outputs": a compiled function's outputs differ
    message: str
    callable: int | None = None  # for "outputs": which torch.compile'd function (in creation order)
    metrics: list = field(default_factory=list)


def script_failure(script: dict) -> str | None:
    """How a script run ended, in one line, or None when it ended normally."""
    status = script.get("status")
    if status == "ok" or (status == "exit" and not script.get("code")):
        return None
    if status == "error":
        first = (script.get("message") or "").strip().splitlines()
        return f"{script.get('type')}: {first[0] if first else ''}"[:300]
    if status == "exit":
        return f"exit status {script.get('code')}"
    return script.get("message", status or "failed")


def fails_in_eager_too(script: dict, eager: dict) -> str | None:
    """How the run with nothing compiled fails, when it fails as the compiled run does (None
    otherwise): the same ending; or the same error under Dynamo's wrappers (type and normalized
    first meaningful line); or an error raised at the same line of the user's code, however
    Dynamo words it (its fake tensors' `a and b must have same reduction dim` for eager's
    `mat1 and mat2 shapes cannot be multiplied`): the program's own mistake, not the compiler's."""
    what, without = script_failure(script), script_failure(eager)
    if what is None or without is None:
        return None
    if what == without:
        return without
    if script.get("status") != "error" or eager.get("status") != "error":
        return None
    if program_signature(script.get("type", ""), script.get("message", "")) == \
            program_signature(eager.get("type", ""), eager.get("message", "")):
        return without
    where = user_line(script)
    return without if where is not None and where == user_line(eager) else None


# One line: a traceback clipped in its middle (the capture keeps its head and tail) can cut a frame's
# `File "...` apart, and a file name spanning the cut would pass for the user's.
FRAME = re.compile(r'File "([^"\n]+)", line (\d+)')
LIBRARY = ("site-packages", "dist-packages", "/lib/python", "<")


def user_line(script: dict) -> tuple[str, int] | None:
    """The innermost line of the user's own code an error was raised at: for an error Dynamo
    raised while tracing, its `from user code:` frames (the traced line); else, or where those are all
    library frames, the traceback's.
    Frames of libraries and of minify itself are not the user's."""
    message, trace = script.get("message") or "", script.get("traceback") or ""
    traced = message.split("from user code:", 1)[1] if "from user code:" in message else ""
    for text in (traced, trace):  # traced frames all in libraries (a model compiled inside DDP): the call's line
        frames = [(f, int(n)) for f, n in FRAME.findall(text)
                  if not any(part in f for part in LIBRARY) and not f.startswith(OWN)]
        if frames:
            return frames[-1]
    return None


def _load(folder: Path | None, number: int):
    path = None if folder is None else folder / f"{number}.pt"
    return torch.load(path, weights_only=True) if path is not None and path.exists() else None


def _numbers(folder: Path | None) -> list[int]:
    if folder is None or not folder.exists():
        return []
    return sorted(int(p.stem) for p in folder.glob("*.pt") if p.stem.isdigit())


def outputs_differ(run: Capture, eager: Capture, judging: Judging = Judging(),
                   only: int | None = None) -> EndToEnd | None:
    """The first compiled function whose first outputs differ from the eager run's, judged as the
    run judges (its tolerances, --strict's equal bits, --ignore's rungs). No fp64 reference was
    saved, so values are judged by the tolerances alone; no output is known aliased, so the layout
    rung is not climbed here. An output equal to eager's in every value is judged as an exact one
    (`equal_values`): a zero whose sign differs there is the signed_zero rung's, which
    `--ignore signed-zero` turns off."""
    for number in _numbers(eager.calls_dir):
        if only is not None and number != only:
            continue
        leaves, actual = _load(eager.calls_dir, number), _load(run.calls_dir, number)
        if actual is None:
            continue  # never called in this run: a script failure says more
        expected, actual = _as_tuple(leaves), _as_tuple(actual)
        ok, metrics = compare(expected, actual, None, judging, equal_values(expected, actual))
        if not ok:
            names = sorted(leaves)
            for m in metrics:  # out[i] of the compared tuple -> the leaf's path in the real output
                index = m["output"][4:-1]
                m["output"] = names[int(index)] if index.isdigit() and int(index) < len(names) else m["output"]
            bad = next(m for m in metrics if not m.get("ok"))
            detail = bad.get("why") if bad.get("rung") == "signed_zero" else \
                ", ".join(f"{k}={bad[k]:.3g}" for k in ("max_abs_err", "mismatch_fraction") if k in bad)
            return EndToEnd("outputs", f"compiled function #{number}: {bad['output']} differs from eager"
                                       + (f" ({detail})" if detail else ""), number, metrics)
    return None


def equal_values(expected, actual) -> set:
    """Paths (as compiler.oracle.flatten names them) of the floating outputs whose every value
    equals eager's, a zero of either sign equal to the other and NaN to NaN. At the program level
    nothing says which outputs eager computes exactly; one computed to the same value everywhere
    is, for the sign of its zeros (compiler.ladder's signed_zero rung), judged as one."""
    same = set()
    for (path, e), (_, a) in zip(flatten(expected), flatten(actual)):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor) and e.is_floating_point() \
                and e.dtype == a.dtype and e.shape == a.shape and e.device == a.device:
            if bool(((e == a) | (e.isnan() & a.isnan())).all()):
                same.add(path)
    return same


def _as_tuple(leaves: dict):
    return tuple(leaves[k] for k in sorted(leaves))


def end_to_end_failure(run: Capture, eager: Capture, judging: Judging = Judging()) -> EndToEnd | None:
    what = script_failure(run.script)
    if what is not None and what != script_failure(eager.script):
        return EndToEnd("script", what)
    return outputs_differ(run, eager, judging)


def same_failure(run: Capture, eager: Capture, wanted: EndToEnd, judging: Judging = Judging()) -> bool:
    if wanted.how == "script":
        return script_failure(run.script) == wanted.message
    return script_failure(run.script) is None and outputs_differ(run, eager, judging, wanted.callable) is not None


@dataclass
class Interaction:
    end_to_end: dict
    keys: list[str]  # the 1-minimal set of graphs that must be compiled together
    graphs: list[int]  # their indices in the capture
    runs: list[dict]  # every subset run: keys and whether it failed
    seconds: float
    complete: bool  # False when the run budget ended the search early
    note: str = ("each of these graphs alone matches eager; the program is reduced as a whole "
                 "while it still fails")

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class Rerun:
    """How the subset search runs the user's script again: the same arguments, planted bugs and
    time limit, each run in a folder of its own under `work`."""

    script: Launch | Path  # how the program is launched (compiler.launch_form), or a script's path
    args: list[str]
    work: Path
    timeout: float
    injections: list[str] = field(default_factory=list)


def find_interaction(rerun: Rerun, capture: Capture, eager: Capture, wanted: EndToEnd, judging: Judging = Judging(),
                     say: Callable[[str], None] = lambda s: None) -> Interaction:
    """Smallest set of graphs that must be compiled for `wanted` to show (the rest run eagerly)."""
    start = time.perf_counter()
    keys = [g.key for g in capture.graphs]
    runs: list[dict] = []
    cache: dict[frozenset, bool] = {}

    def fails(subset: list[str]) -> bool:
        chosen = frozenset(subset)
        if chosen not in cache:
            if len(runs) >= MAX_RUNS:
                return False
            n = len(runs)
            run = run_capture(rerun.script, rerun.args, rerun.work / f"subset_{n}", rerun.work / f"subset_{n}.log",
                              rerun.timeout, injections=rerun.injections, only=sorted(chosen, key=keys.index))
            cache[chosen] = same_failure(run, eager, wanted, judging)
            runs.append({"keys": sorted(chosen, key=keys.index), "fails": cache[chosen],
                         "seconds": round(run.seconds, 2)})
            say(f"  compiling graphs {', '.join(runs[-1]['keys']) or '(none)'}: "
                f"{'fails' if cache[chosen] else 'passes'}")
        return cache[chosen]

    # With every graph compiled the failure was just seen (it is the capture run itself).
    cache[frozenset(keys)] = True
    runs.append({"keys": keys, "fails": True, "seconds": round(capture.seconds, 2), "capture": True})
    found = ddmin(keys, one_at_a_time(fails))
    by_key = {g.key: g.index for g in capture.graphs}
    return Interaction(asdict(wanted), found, [by_key[k] for k in found], runs,
                       round(time.perf_counter() - start, 2), complete=len(runs) < MAX_RUNS)
