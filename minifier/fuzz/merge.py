"""`minify fuzz merge DIR... -o OUT`: the findings of many shards (or campaigns) in one record,
one entry per finding id (minifier.fuzz.records.combine), each finding's files copied beside it,
so OUT is a campaign folder of its own that `recheck`, `--known` and a later merge read."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from minifier.fuzz.records import RECORD, combine, load, now, record_path, write

MERGE_OUTPUTS = {RECORD, "findings", "merge.json", "work"}  # work: recheck's worker logs


def merge(sources: list[Path], out: Path) -> dict:
    """Merge the records of `sources` into OUT's (OUT's own record, if any, first)."""
    merged = load(out) if out.is_dir() else {}
    out.mkdir(parents=True, exist_ok=True)
    seen_in: dict[str, int] = {}
    per_source = {}
    for source in sources:
        records = load(source)
        per_source[str(source)] = len(records)
        home = record_path(source).parent
        for ident, record in records.items():
            seen_in[ident] = seen_in.get(ident, 0) + 1
            merged[ident] = combine(merged.get(ident), record)
            files, kept = home / "findings" / ident, out / "findings" / ident
            if files.is_dir() and not kept.exists() and files.resolve() != kept.resolve():
                shutil.copytree(files, kept)
    write(out, merged)
    summary = {"merged": now(), "sources": per_source, "records_read": sum(per_source.values()),
               "findings": len(merged), "in_several_sources": sorted(i for i, n in seen_in.items() if n > 1)}
    (out / "merge.json").write_text(json.dumps(summary, indent=1))
    return summary


def problem(sources: list[Path], out: Path) -> str | None:
    for source in sources:
        if not source.exists():
            return f"{source}: no such folder or file"
        if source.is_dir() and not (source / RECORD).is_file():
            return f"{source}: holds no {RECORD} (a campaign folder of minify fuzz, or a record file)"
        try:
            load(source)
        except ValueError as exc:
            return str(exc)
    if out.exists() and not out.is_dir():
        return f"-o {out}: not a folder"
    others = sorted(p.name for p in out.iterdir() if p.name not in MERGE_OUTPUTS) if out.is_dir() else []
    if others:
        return f"output folder {out} holds files that no merge wrote (e.g. {out / others[0]}); choose another with -o"
    try:
        load(out) if out.is_dir() else None
    except ValueError as exc:
        return str(exc)
    return None


def main(argv: list[str], console, errors) -> int:
    from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_CANNOT_WRITE, EXIT_OK
    from repro.one_line_parser import OneLineParser

    p = OneLineParser(prog="minify fuzz merge", usage="minify fuzz merge DIR... -o OUT")
    p.add_argument("sources", nargs="+", type=Path, metavar="DIR", help="campaign folders or findings.json files")
    p.add_argument("-o", "--out", type=Path, required=True, help="the merged campaign folder")
    ns = p.parse_args(argv)
    bad = problem(ns.sources, ns.out)
    if bad:
        errors.print(f"minify fuzz merge: {bad}", highlight=False, markup=False)
        return EXIT_BAD_INPUT
    try:
        summary = merge(ns.sources, ns.out)
    except OSError as exc:
        errors.print(f"minify fuzz merge: cannot write {exc.filename or ns.out}: {exc.strerror}", markup=False)
        return EXIT_CANNOT_WRITE
    console.print(f"merged {summary['records_read']} finding(s) from {len(ns.sources)} source(s): "
                  f"{summary['findings']} distinct ({len(summary['in_several_sources'])} found by more than one); "
                  f"{ns.out / RECORD}", highlight=False, markup=False)
    return EXIT_OK
