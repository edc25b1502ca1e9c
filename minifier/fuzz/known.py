"""What a campaign already knows: the findings of earlier campaigns (the output folder's own
record and any `--known RECORD`), which it reports as `still-failing`, not `new`; and the user's
list of known upstream issues (`--known-issues FILE`: finding id -> issue URL), whose findings are
masked by name: not looked for again, not reported."""
from __future__ import annotations

import json
from pathlib import Path

from minifier.fuzz.failures import Masks
from minifier.fuzz.finding_id import id_of, id_of_row
from minifier.fuzz.records import combine, keep_files, load, new_record, now, save_check, write


def load_known_issues(path: Path | None) -> dict[str, str]:
    """id -> issue URL from a JSON object or a TOML file (top-level `"f-..." = "URL"` pairs, or
    an [issues] table); a file that is neither is a ValueError with one line."""
    if path is None:
        return {}
    try:
        text = path.read_text()
    except OSError as exc:
        raise ValueError(f"--known-issues {path}: {exc.strerror}") from None
    try:
        data = json.loads(text)
    except ValueError:
        try:
            import tomllib
            data = tomllib.loads(text)
        except (ImportError, ValueError) as exc:
            raise ValueError(f"--known-issues {path}: neither a JSON object nor TOML ({exc})") from None
    data = data.get("issues", data) if isinstance(data, dict) else data
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ValueError(f"--known-issues {path}: expected finding ids mapped to issue URLs, e.g. "
                         "{\"f-0123456789ab\": \"https://github.com/pytorch/pytorch/issues/1\"}")
    return data


def known_records(opts) -> dict[str, dict]:
    """Findings of earlier campaigns: the output folder's record, then each --known record."""
    known: dict[str, dict] = {}
    for where in [opts.out] * Path(opts.out).is_dir() + list(opts.known):
        for ident, record in load(Path(where)).items():
            known[ident] = combine(known.get(ident), record)
    return known


class KnownIssueMasks(Masks):
    """Masks that also hold the user's known issues: a failure whose id is listed, or that is
    such a finding seen with more ops around it (the same signature, dtype and wrong-gradient-or-
    not, its ops a superset of the recorded ones: what it is before shrinking)."""

    def __init__(self, base: Masks, issues: dict[str, str], records: dict[str, dict]):
        super().__init__(base.ops, base.rungs, base.signatures, base.keys, base.known)
        self.issue_ids = set(issues)
        self.issue_records = [r for i, r in records.items() if i in issues]

    def matches(self, f) -> bool:
        if super().matches(f) or id_of(f) in self.issue_ids:
            return True
        return any(r["signature"] == f.signature and set(r["ops"]) <= set(f.suspects) and r["dtype"] == f.dtype
                   and (r.get("gradient") is None) == (f.gradient is None) for r in self.issue_records)


def campaign_masks(opts):
    """A factory of the masks each round (or each unit of a shard) starts from."""
    issues = load_known_issues(opts.known_issues)
    records = known_records(opts) if issues else {}

    def make() -> Masks:
        base = Masks.parse(opts.masks)
        return KnownIssueMasks(base, issues, records) if issues else base
    return make


def record_campaign(opts, failures: list, rows: list[dict]) -> dict:
    """Write this campaign's findings into OUT/findings.json (and their files into
    OUT/findings/<id>/), each marked new or still-failing; label each row with its id.
    Returns the ids, new and known, for fuzz.json and the summary."""
    from minifier.exit_codes import EXIT_NUMERICS

    out = opts.out.resolve()
    known, issues = known_records(opts), load_known_issues(opts.known_issues)
    folder = load(out)
    seen, summary = now(), {"new": [], "still_failing": [], "known_issue": []}
    for failure, row in zip(failures, rows):
        if row.get("exit") == EXIT_NUMERICS:  # the pipeline judged it rounding: not a finding
            continue
        ident = row["id"] = id_of_row(row)
        home = out / "findings" / ident
        record = new_record(ident, row, opts, seen)
        if not (home / "check" / "check.json").is_file():
            save_check(failure, opts, home / "check")
        record.update(keep_files(row, home))
        if ident in known:
            record["status"] = "still-failing"
            record = combine(known[ident], record)
        if ident in issues:
            record["issue"] = issues[ident]
        row["status"], row["issue"] = record["status"], record["issue"]
        folder[ident] = combine(folder.get(ident), record)
        folder[ident]["status"] = record["status"]
        which = "known_issue" if record["issue"] else "new" if record["status"] == "new" else "still_failing"
        summary[which].append(ident)
    write(out, folder)
    return summary
