"""A finding's life: one JSON record per finding, kept in `OUT/findings.json` (the format in
docs/fuzzing.md, "Finding records"), and its files in `OUT/findings/<id>/`.

Each finding is keyed by its stable id (minifier.fuzz.finding_id). A campaign into a folder that
already holds a record, or given `--known RECORD`, marks the findings it meets again
`still-failing` instead of `new`; `minify fuzz recheck` replays each one's saved check
(`findings/<id>/check/`: the program, its inputs and the planted bugs, as the campaign checked
it) and marks it `still-failing`, `fixed` (with the torch version) or `changed`. Paths in a
record are relative to the folder that holds it, so a folder can be moved, merged or copied from
a cluster's worker as a whole.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

FORMAT = "minify-fuzz-findings/1"
RECORD = "findings.json"
STATUSES = ("new", "still-failing", "fixed", "changed", "cannot-check")
REPRO_FILES = ("repro.py", "inputs.pt", "repro.json", "issue.md", "blame.json")


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def record_path(where: Path) -> Path:
    """A record file, or the record of a campaign folder."""
    return where / RECORD if where.is_dir() else where


def load(where: Path) -> dict[str, dict]:
    """id -> record, from a record file or a campaign folder ({} when the folder has none yet).
    A file that is not a record is a ValueError with one line."""
    path = record_path(where)
    if where.is_dir() and not path.exists():
        return {}
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a finding record ({getattr(exc, 'strerror', None) or exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("findings"), dict):
        raise ValueError(f"{path}: not a finding record (no \"format\": \"{FORMAT}\")")
    return data["findings"]


def write(folder: Path, findings: dict[str, dict]) -> Path:
    path = folder / RECORD
    ordered = dict(sorted(findings.items(), key=lambda kv: (kv[1].get("first_seen", ""), kv[0])))
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"format": FORMAT, "findings": ordered}, indent=1, default=str))
    tmp.replace(path)  # whole or not at all: a reader never sees half a record
    return path


def combine(old: dict | None, new: dict) -> dict:
    """One finding seen in two records (two shards, two campaigns): the earliest first sighting,
    the latest last one and its status, the repro that verified, every place it was seen."""
    if old is None:
        return dict(new)
    later, earlier = (new, old) if new.get("last_seen", "") >= old.get("last_seen", "") else (old, new)
    merged = {**earlier, **later}
    merged["first_seen"] = min(old.get("first_seen", ""), new.get("first_seen", "")) or later.get("first_seen")
    merged["seen_in"] = sorted(set(old.get("seen_in", [])) | set(new.get("seen_in", [])))
    if not later.get("verified") and earlier.get("verified"):
        for key in ("repro", "verified", "blame", "issue_text"):
            merged[key] = earlier.get(key)
    merged["issue"] = later.get("issue") or earlier.get("issue")
    return merged


def save_check(failure, opts, folder: Path) -> None:
    """What recheck replays: the program as the worker compiled it, its inputs and the plants."""
    import torch

    from compiler.inject import parse_spec
    from compiler.stages import CompileSpec
    from minifier.fuzz.campaign import to_device

    folder.mkdir(parents=True, exist_ok=True)
    program = failure.program
    torch.save({n: to_device(t, opts.device) for n, t in program.inputs.items()}, folder / "values.pt")
    check = {"source": program.module_source(), "inputs": list(program.inputs), "device": opts.device,
             "spec": CompileSpec(dynamic=True if program.dynamic else None).to_dict(),
             "injections": [parse_spec(s).to_dict() for s in opts.injections], "backward": program.backward,
             "function": program.function_source()}
    (folder / "check.json").write_text(json.dumps(check, indent=1))


def keep_files(row: dict, home: Path) -> dict:
    """Copy the finding's repro (and case script) into `home`; the paths, relative to the record."""
    kept = {}
    repro = Path(row["repro"]) if row.get("repro") else None
    if repro and repro.is_file():
        (home / "repro").mkdir(parents=True, exist_ok=True)
        for name in REPRO_FILES:
            if (repro.parent / name).is_file():
                shutil.copy2(repro.parent / name, home / "repro" / name)
        kept["repro"] = f"{home.parent.name}/{home.name}/repro/repro.py"
        if (home / "repro" / "issue.md").is_file():
            kept["issue_text"] = f"{home.parent.name}/{home.name}/repro/issue.md"
    case = Path(row["case"]) if row.get("case") else None
    if case and case.is_file():
        for path in case.parent.glob(case.stem + ".*"):
            shutil.copy2(path, home / ("case" + path.suffix))
        kept["case"] = f"{home.parent.name}/{home.name}/case.py"
    return kept


def new_record(ident: str, row: dict, opts, seen: str) -> dict:
    import torch

    return {"id": ident, "signature": row["signature"], "kind": row["kind"], "rung": row.get("rung", ""),
            "dtype": row.get("dtype", ""), "ops": row["suspects"], "gradient": row.get("gradient"),
            "key": row["key"], "cost": row.get("cost"), "message": (row.get("message") or "")[:2000],
            "program": row.get("program"), "blame": row.get("blame") or None, "repro": None,
            "verified": row.get("verified"), "reduced_ops": row.get("reduced_ops"), "case": None,
            "issue_text": None, "check": f"findings/{ident}/check", "torch": torch.__version__,
            "device": opts.device, "first_seen": seen, "last_seen": seen, "seen_in": [campaign_label(opts)],
            "status": "new", "fixed_in": None, "checked": None, "issue": None}


def campaign_label(opts) -> str:
    shard = f" shard {opts.shard}" if getattr(opts, "shard", None) else ""
    return f"seed {opts.seed}{shard}"
