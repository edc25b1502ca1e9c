"""`minify fuzz recheck DIR`: every saved finding checked again on the installed torch, as the
campaign checked it (its program, inputs and planted bugs, the oracle's whole ladder, in a
worker), and marked in DIR/findings.json: `still-failing` (the same signature), `fixed` (it
passes; `fixed_in` names this torch), `changed` (it fails otherwise) or `cannot-check`."""
from __future__ import annotations

import json
from pathlib import Path

from minifier.fuzz.records import RECORD, load, now, write
from minifier.workers.answer import Answer


def recheck_one(pool, record: dict, home: Path) -> dict:
    """The finding's new status fields, from one check of its saved program."""
    import torch

    from minifier.workers.job import Job

    folder = home / record.get("check", f"findings/{record['id']}/check")
    try:
        check = json.loads((folder / "check.json").read_text())
    except (OSError, ValueError):
        return {"status": "cannot-check", "checked": now(), "checked_torch": torch.__version__,
                "recheck": f"no saved check in {folder}"}
    job = Job(source=check["source"], inputs=tuple(check["inputs"]), case_dir=str(folder), spec=check["spec"],
              stage="inductor", injections=tuple(check["injections"]), backward=check["backward"])
    answer = Answer.from_wire(pool.run(job.to_dict()))
    fields = {"checked": now(), "checked_torch": torch.__version__}
    if answer.failed and answer.signature == record["signature"]:
        return {**fields, "status": "still-failing", "last_seen": fields["checked"], "fixed_in": None,
                "recheck": "same signature"}
    if answer.status == "pass":
        return {**fields, "status": "fixed", "fixed_in": record.get("fixed_in") or torch.__version__,
                "recheck": "compiled matches eager" + (" (numerics only)" if answer.kind == "numerics" else "")}
    what = answer.signature or answer.status or "no answer"
    return {**fields, "status": "changed" if answer.failed else "cannot-check",
            "recheck": f"now {what}: {(answer.message or '')[:300]}"}


def recheck(folder: Path, say) -> dict[str, dict]:
    from compiler import settings
    from minifier.workers.pool import WorkerPool

    findings = load(folder)
    settings.share_cores()
    settings.drop_overrides()  # the worker's caches as compiler.settings sets them
    pool = WorkerPool(1, folder / "work" / "recheck", timeout=120.0)
    try:
        for number, (ident, record) in enumerate(findings.items(), 1):
            record.update(recheck_one(pool, record, folder))
            say(f"{number}/{len(findings)} {ident} {record['key']}: {record['status']} ({record['recheck']})")
            write(folder, findings)  # each answer kept as it comes
    finally:
        pool.close()
    return findings


def main(argv: list[str], console, errors) -> int:
    from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_FOUND, EXIT_NOT_REPRODUCED, EXIT_OK
    from repro.one_line_parser import OneLineParser

    p = OneLineParser(prog="minify fuzz recheck", usage="minify fuzz recheck DIR [-q]")
    p.add_argument("folder", type=Path, metavar="DIR", help="a campaign (or merged) folder holding findings.json")
    p.add_argument("-q", "--quiet", action="store_true")
    ns = p.parse_args(argv)
    try:
        if not (ns.folder / RECORD).is_file():
            raise ValueError(f"{ns.folder}: holds no {RECORD} (a campaign folder of minify fuzz)")
        load(ns.folder)
    except ValueError as exc:
        errors.print(f"minify fuzz recheck: {exc}", highlight=False, markup=False)
        return EXIT_BAD_INPUT
    say = (lambda text: None) if ns.quiet else (lambda text: errors.print(text, highlight=False, markup=False))
    findings = recheck(ns.folder, say)
    counts: dict[str, int] = {}
    for record in findings.values():
        counts[record["status"]] = counts.get(record["status"], 0) + 1
    console.print(f"rechecked {len(findings)} finding(s): " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
                  + f"; {ns.folder / RECORD}", highlight=False, markup=False)
    if counts.get("still-failing") or counts.get("changed"):
        return EXIT_FOUND
    return EXIT_NOT_REPRODUCED if counts.get("cannot-check") else EXIT_OK
