"""AOTInductor packages in the script's run (compiler/aoti_capture.py recorded them): a failure
in one is reduced (minifier/program/aoti_reduce.py); one it could not reduce ends in a plain
"not supported" (exit 9) that says what failed, why it was not reduced and where the exported
program and its inputs are, never a bug verdict the tool cannot back, and never the
program-level search (its layers and candidates are about torch.compile). An export that
raised is the user's (exit 2 with the exporter's message)."""
from __future__ import annotations

import json
from pathlib import Path

from minifier.exit_codes import EXIT_UNSUPPORTED
from minifier.capture.process import Capture
from minifier.report.rows import write_report
from minifier.start.launch import UserError

ISSUE = "minify could not reduce this AOTInductor package (issue 49)"


def packages(capture: Capture) -> list[dict]:
    """Each package's record (`aoti_N/record.json`), with its folder, in compile order."""
    if capture.folder is None:
        return []
    found = []
    for path in capture.folder.glob("aoti_*/record.json"):
        try:
            found.append({**json.loads(path.read_text()), "folder": str(path.parent)})
        except (OSError, ValueError):
            continue
    return sorted(found, key=lambda r: r.get("index", 0))


def used(capture: Capture) -> bool:
    """Whether the script's run compiled or loaded an AOTInductor package."""
    folder = capture.folder
    return folder is not None and (any(folder.glob("aoti_*/record.json")) or (folder / "aoti_prebuilt.txt").exists()
                                   or (folder / "aoti_calling").exists())


def running(capture: Capture) -> int | None:
    """The package whose call was running when the script's process ended (a crash)."""
    marker = None if capture.folder is None else capture.folder / "aoti_calling"
    try:
        return int(marker.read_text()) if marker is not None and marker.exists() else None
    except (OSError, ValueError):
        return None


def _first_line(text: str | None) -> str:
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def failure_line(capture: Capture, records: list[dict], e2e=None) -> str | None:
    """What went wrong with AOTInductor in the run, in one sentence (None: nothing seen)."""
    failing = [r for r in records if r.get("failure")]
    if failing:
        r, f = failing[0], failing[0]["failure"]
        how = "differs from its exported program run eagerly" if f.get("kind") == "accuracy" else \
            f"ended in a {f.get('kind', 'failure').replace('_', ' ')}"
        return (f"AOTInductor package {r['index']} (aoti_compile_and_package) {how}: "
                f"{_first_line(f.get('message') or f.get('signature'))} "
                f"(its exported program: {Path(r['folder']) / 'exported.pt2'})")
    index = running(capture)
    if index is not None and capture.script.get("status") in ("crash", "hang"):
        saved = capture.folder / f"aoti_{index}" / "exported.pt2"
        return (f"the script's process died ({capture.script.get('status')}) while AOTInductor package {index} ran "
                f"(its exported program: {saved})")
    if e2e is not None:
        return (f"the program fails with AOTInductor and passes with it turned off (each package's exported "
                f"program run eagerly): {_first_line(getattr(e2e, 'message', str(e2e)))}")
    return None


def refuse_prebuilt(capture: Capture) -> None:
    """A package the script loads but did not compile in this run cannot be turned off in the
    control (there is no exported program to run instead): no verdict can rest on that control."""
    listed = None if capture.folder is None else capture.folder / "aoti_prebuilt.txt"
    if listed is not None and listed.exists():
        path = (listed.read_text().splitlines() or ["?"])[0]
        raise UserError(f"the script loads an AOTInductor package it did not compile ({path}), which minify can "
                        f"neither check nor turn off; compile it in the script (aoti_compile_and_package of its "
                        f"ExportedProgram) and run minify again; {ISSUE}", EXIT_UNSUPPORTED)


def refuse(capture: Capture, e2e=None, out: Path | None = None, report: dict | None = None) -> None:
    """Raise exit 9 where the run used AOTInductor and something failed (or a package it
    cannot check), with report.json saying so when `report` is given; a run with packages whose
    every check passed and whose program agrees with the control goes on."""
    refuse_prebuilt(capture)
    records = packages(capture)
    if not records and running(capture) is None:
        return
    line = failure_line(capture, records, e2e)
    if line is None:
        return
    if report is not None and report.get("aoti_replay"):  # aoti_reduce tried: why it could not
        line += f"; not reduced: {report['aoti_replay']}"
    if report is not None and out is not None:
        report.update(status="unsupported", unsupported=f"{line}; {ISSUE}", aoti_packages=[
            {k: r.get(k) for k in ("index", "calls", "failure", "verdict", "folder")} for r in records])
        write_report(out, report)
    raise UserError(f"{line}; {ISSUE}", EXIT_UNSUPPORTED)


def refuse_program_level(capture: Capture, e2e, out: Path, report: dict) -> None:
    """The program-level search reruns the program with torch.compile's layers and reduces its
    source with torch.compile as the oracle: with AOTInductor in the program it could name a
    layer that is not to blame. Say so instead."""
    if used(capture):
        refuse(capture, e2e, out, report)


def export_failed(capture: Capture) -> str | None:
    """The exporter's own message, where torch.export.export raised in the script's run."""
    path = None if capture.folder is None else capture.folder / "export_error.json"
    if path is None or not path.exists():
        return None
    try:
        error = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    lines = [line for line in error.get("message", "").splitlines() if line.strip()]
    return f"{error.get('type')}: {lines[0] if lines else ''}"
