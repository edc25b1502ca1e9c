"""What a stopped run leaves (Ctrl-C, SIGTERM, --max-time): report.json saying why it stopped,
where it was and what was verified so far; the line the console shows; and, on `--resume`,
the line that says what the earlier run left to reuse."""
from __future__ import annotations

import json
import time
from pathlib import Path

from minifier.report.schema import stamped
from minifier.workers.stop import STOP

WORDS = {"interrupted": "interrupted (Ctrl-C)", "terminated": "terminated (SIGTERM)",
         "max-time": "stopped: --max-time ran out"}
RESUME = "the same command with --resume continues from the checkpoints in work/"


class StepsSeen:
    """The progress display, noting each step as where the run is (for the stop's report)."""

    def __init__(self, ui):
        self.ui = ui

    def step(self, text: str) -> None:
        STOP.where = text
        self.ui.step(text)

    def __getattr__(self, name):
        return getattr(self.ui, name)


def write_stopped(out: Path, script, start: float, session=None, status: str = "interrupted",
                  reason: str | None = None) -> dict:
    """report.json of a run that stopped before its end: why, where, the repros this run wrote
    and which of them were verified, what the capture recorded (with `session`, once it has)."""
    began = time.time() - (time.perf_counter() - start)
    repros = [str(p) for p in [out / "repro.py", *sorted(out.glob("bug-*/repro.py"))]
              if p.exists() and p.stat().st_mtime >= began]
    report = {"status": status, "stopped": reason or STOP.reason or status, "where": STOP.where, "script": str(script),
              "repros": repros, "verified": _verified(session), "wall_seconds": round(time.perf_counter() - start, 2),
              "resume": RESUME}
    capture = getattr(session, "capture", None)
    if capture is not None:
        report.update(graph_count=len(capture.graphs), failing_graphs=[g.index for g in capture.failing],
                      capture_seconds=round(capture.seconds, 2), script_status=capture.script.get("status"))
    if session is not None:
        report["phases"] = session.phases.to_dict()
    report = stamped(report)
    (out / "report.json").write_text(json.dumps(report, indent=1, default=str))
    STOP.reported = True
    return report


def _verified(session) -> list[dict]:
    """The repros verified before the stop: their rows, as far as they got (never a verdict
    reached after it: those raise Cancelled)."""
    verifications = getattr(session, "verifications", None)
    rows = []
    for future in list(getattr(verifications, "rows", {}).values()):
        if future.done() and not future.cancelled() and future.exception() is None:
            row = future.result()
            rows.append({k: row.get(k) for k in ("repro", "verified", "verify_line", "seconds_to_repro") if k in row})
    return rows


def stopped_line(out: Path | None) -> str:
    """The console's one line for a stopped run: why, where, and how to go on."""
    what = WORDS.get(STOP.reason or "interrupted", STOP.reason or "interrupted")
    if out is None:
        return what
    where = f" during: {STOP.where}" if STOP.where else ""
    return (f"{what}{where}; what was found so far is in {out} (report.json); "
            f"add --resume to the same command to continue")


def resume_line(work: Path) -> str | None:
    """What `--resume` finds of the earlier run: its checkpoints and the answers saved in them."""
    answers, checkpoints = 0, 0
    for path in sorted(work.glob("cases/*/checkpoint.json")):
        try:
            saved = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        checkpoints += 1
        answers += len(saved.get("answers") or {})
    if not checkpoints:
        return f"--resume: no checkpoint in {work}; starting from the beginning"
    return (f"--resume: reusing {checkpoints} checkpoint(s) in {work / 'cases'} with {answers} cached answer(s) "
            f"(answers already given are not asked again)")
