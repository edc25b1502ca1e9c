"""What the repro's own check says under another torch: reproduces, passes, a different failure,
or cannot run. Only the repro's own verdict counts: a traceback, a crash, or a raising repro
that raises another exception than the one recorded (an op missing, an unrelated error) is a
different failure, never "reproduces"."""
from __future__ import annotations

import json
import signal
from dataclasses import dataclass
from pathlib import Path

from compiler.signature import last_exception, program_signature
from repro.manifest import MANIFEST, REPRO, ReproFolderError, read_manifest

REPRODUCES, PASSES, DIFFERENT, CANNOT_RUN = "reproduces", "passes", "different failure", "cannot run"
RAISING = ("compile_error", "runtime_error")
MARKS = ("torch.compile raised where eager did not:", "torch.compile differs from eager:")  # program repros


@dataclass
class Expected:
    """The failure a repro folder was verified with."""
    folder: Path
    form: str  # "graph" (repro.json) or "program" (a whole reduced program: report.json's "program")
    kind: str  # accuracy, compile_error, crash, ... ("program" for a program repro)
    signature: str
    mode: str = "check"  # a program repro: "check" (its checker's line) or "plain" (its own exception)
    torch: str | None = None  # the torch it was recorded with

    @property
    def exception(self) -> str | None:
        """The exception type a raising graph repro must raise to reproduce."""
        return self.signature.split("|")[1] if self.form == "graph" and self.kind in RAISING else None


def expected_of(folder: Path) -> Expected:
    """The recorded failure of a repro folder; ReproFolderError in one line otherwise."""
    if (folder / MANIFEST).is_file() or not (folder / "report.json").is_file():
        data = read_manifest(folder)
        return Expected(folder, "graph", data.get("kind", "accuracy"), data.get("signature", ""),
                        torch=data.get("torch"))
    if not (folder / REPRO).is_file():
        raise ReproFolderError(f"{folder} holds no {REPRO}: not a repro folder written by minify")
    try:
        program = json.loads((folder / "report.json").read_text()).get("program") or {}
    except (OSError, ValueError, AttributeError) as exc:
        raise ReproFolderError(f"{folder / 'report.json'}: unreadable ({exc})") from None
    if not program.get("signature"):
        raise ReproFolderError(f"{folder} holds no repro.json and its report.json no program repro")
    return Expected(folder, "program", "program", program["signature"], program.get("oracle") or "check")


def judge(expected: Expected, code: int | None, stdout: str, stderr: str) -> tuple[str, str]:
    """(outcome, why in one line) of one run of repro.py."""
    if code is None:
        return CANNOT_RUN, "did not finish in time"
    if expected.form == "program":
        return _judge_program(expected, code, stderr)
    verdicts = [line for line in stdout.splitlines() if line.startswith(("REPRODUCED", "NOT REPRODUCED",
                                                                           "CANNOT RUN"))]
    verdict = verdicts[-1] if verdicts else ""
    if code == 1 and verdict.startswith("REPRODUCED"):
        said = verdict[len("REPRODUCED:"):].strip()
        raised = said.split(":", 1)[0].strip()
        if expected.exception and raised != expected.exception:
            return DIFFERENT, f"raises {said[:160]} (recorded: {expected.exception})"
        return REPRODUCES, verdict[:200]
    if code == 0 and verdict.startswith("NOT REPRODUCED"):
        return PASSES, verdict[:200]
    if code == 2 and verdict.startswith("CANNOT RUN"):
        return CANNOT_RUN, verdict[:200]
    return DIFFERENT, ended(code, stderr)


def _judge_program(expected: Expected, code: int, stderr: str) -> tuple[str, str]:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    if code == 0:
        return PASSES, "the program ran to its end, every compiled call matching eager"
    if expected.mode == "check":
        line = next((line for line in reversed(lines) if line.startswith(MARKS)), None)
        if code == 1 and line is not None:
            return (REPRODUCES if _check_signature(line) == expected.signature else DIFFERENT), line[:200]
        return DIFFERENT, ended(code, stderr)
    raised = last_exception(stderr)
    if raised is not None and program_signature(*raised) == expected.signature:
        return REPRODUCES, program_signature(*raised)[:200]
    return DIFFERENT, ended(code, stderr)


def _check_signature(line: str) -> str:
    """The signature a program repro's checker line gives (minifier/program/instrument.py's)."""
    mark = next(m for m in MARKS if line.startswith(m))
    detail = line[len(mark):].strip()
    return mark + (" " + detail.split(":")[0] if mark == MARKS[0] else "")


def ended(code: int, stderr: str) -> str:
    """How a run ended that gave no verdict: its exception, or its signal or exit status."""
    raised = last_exception(stderr)
    if raised is not None:
        name, message = raised
        return f"{name}: {(message.strip().splitlines() or [''])[0]}"[:200]
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    tail = [line for line in stderr.strip().splitlines() if line.strip()]
    return f"exit status {code}" + (f": {tail[-1][:160]}" if tail else " and no verdict line")
