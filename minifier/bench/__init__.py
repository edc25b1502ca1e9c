"""`minify bench`: run minify over the corpus and score every answer against the manifest.

Each case runs the way a user runs minify (`python -m minifier SCRIPT`, a fresh process), and
its report.json is checked against the case's known answer: the right graph, the right stage,
the culprit op still in the repro, the repro verified, how close the final op count is to
the minimum, the compiles it took, the wall time. Without a selection it runs the CPU cases
tagged `default` (sized to finish within about 30 minutes on 2 cores).

The cases are those of corpus/manifest.json (planted bugs) and corpus/programs/manifest.json
(foreign programs with no bug, kind `none`: the right answer is exit 3, "Nothing failed", with
no traceback on the console; `--all` and `--cases` include them, the default subset does not).

`--vs-builtin` also runs PyTorch's own minifier on each planted case (minifier/bench/builtin.py
says how the bug reaches its processes).

`--scale` is another benchmark: residual MLPs of 4 to 192 blocks, minify's whole run against the
script's own (minifier/bench/scale.py).

Parts: cases.py (the manifests, the selection, a minify run), score.py (one answer against its
entry, the totals), builtin.py (the built-in minifier), table.py (the table), markdown.py (the
README's table under a line naming date, commit, machine and torch: `--markdown`), scale.py and
memory.py (the scale benchmark and the peak memory of a process tree).

May import: exit_codes, phases, start
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from minifier.bench.builtin import case_injections, has_repro_level, run_builtin, sitecustomize_source
from minifier.bench.cases import CORPUS, ROOT, load_manifest, run_minify, seeded_cache, select
from minifier.bench.score import Row, dynamo_graph_count, expected_miss, failing_dynamo_graph, score, summary
from minifier.bench.table import print_table
from minifier.exit_codes import EXIT_WRONG_ANSWERS
from repro.one_line_parser import OneLineParser

__all__ = ["CORPUS", "ROOT", "Row", "dynamo_graph_count", "failing_dynamo_graph", "load_manifest", "main", "score",
           "select", "sitecustomize_source", "summary"]


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="minify bench", description="Run minify over the corpus and score it.")
    p.add_argument("--cases", help="comma-separated case names (any device)")
    p.add_argument("-k", dest="substring", help="cases whose name contains this")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="device of the default subset")
    p.add_argument("--all", action="store_true", help="every case of --device, not only those tagged default "
                                                      "(the foreign programs included)")
    p.add_argument("--json", type=Path, default=Path("minify-bench/bench.json"), help="where to write the results")
    p.add_argument("-o", "--out", type=Path, default=Path("minify-bench"), help="folder for each case's minify output")
    p.add_argument("-j", "--jobs", type=int, help="minify worker processes per case (default: minify's)")
    p.add_argument("--timeout", type=float, default=1200.0, help="seconds per case and per built-in step")
    p.add_argument("--vs-builtin", action="store_true", help="also run PyTorch's built-in minifier on each case")
    p.add_argument("--no-isolate", action="store_true", help="run the built-in minifier with --no-isolate")
    p.add_argument("--scale", action="store_true",
                   help="the scale benchmark: residual MLPs of --sizes blocks with one mis-generated op; the script "
                        "alone, minify, and with --vs-builtin the built-in at --builtin-sizes (minifier/bench/scale.py)")
    p.add_argument("--sizes", type=_sizes, help="--scale: comma-separated block counts (default 4,16,48,96,192)")
    p.add_argument("--rows", type=_positive, help="--scale: rows of the model's input (default 32); the "
                                                   "activations, which minify records, grow with them")
    p.add_argument("--builtin-sizes", type=_sizes, help="--scale --vs-builtin: the sizes the built-in runs at "
                                                         "(default 48)")
    p.add_argument("--markdown", action="store_true",
                   help="also print the table as the README holds it, under a line naming the date, commit, "
                        "machine and torch version")
    p.add_argument("--fresh-cache", action="store_true",
                   help="give each tool, on each case, its own empty Inductor cache that one untimed run of "
                        "the script has filled (as a user's is); otherwise both share the machine's warm cache")
    return p


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of block counts: {text!r}") from None
    if not sizes or min(sizes) < 1:
        raise argparse.ArgumentTypeError(f"block counts must be positive: {text!r}")
    return sizes


def _positive(text: str) -> int:
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"not a positive number of rows: {text!r}")
    return int(text)


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    from minifier.start.launch import default_jobs

    ns.jobs = ns.jobs or default_jobs()
    from rich.console import Console

    console = Console(stderr=True)
    if ns.scale:
        from minifier.bench.scale import main_scale

        return main_scale(ns, Console(width=max(Console().width, 200)))
    cases = select(load_manifest(), ns.cases, ns.substring, ns.device, ns.all)
    if not cases:
        console.print("minify bench: no case selected")
        return 2
    devices = sorted({c["device"] for c in cases})  # what the cases run on (--cases may pick CUDA ones)
    cuda = _cuda_available() if "cuda" in devices else False
    rows: list[Row] = []
    for i, case in enumerate(cases, 1):
        if case["device"] == "cuda" and not cuda:
            rows.append(Row(case["name"], case["kind"], note="skipped: needs CUDA", min_ops=case.get("min_ops")))
            console.print(f"[{i}/{len(cases)}] {case['name']}: [yellow]skipped, no CUDA here[/yellow]")
        else:
            console.print(f"[{i}/{len(cases)}] {case['name']}: minify ...", highlight=False)
            rows.append(run_case(case, ns, console))
        _write_json(ns.json, rows, ns, devices)  # after every case: a long run interrupted still leaves results
    print_table(rows, Console(width=max(Console().width, 160)), ns.vs_builtin)
    if ns.markdown:
        from minifier.bench.markdown import markdown, run_facts

        print(markdown(rows, run_facts(devices), ns.vs_builtin, _builtin_flags(ns)))
    totals = summary(rows)
    console.print(f"correct {totals['correct']}/{totals['scored']} scored cases "
                  f"({totals['programs_correct']}/{totals['programs']} foreign programs); "
                  f"total wall {totals['total_wall']} s; results in {ns.json}", highlight=False)
    return 0 if all(r.correct or expected_miss(r) for r in rows) else EXIT_WRONG_ANSWERS


def run_case(case: dict, ns: argparse.Namespace, console) -> Row:
    """minify on one case, scored; with --vs-builtin the built-in minifier too (planted cases only)."""
    out = ns.out.resolve()
    caches = out / "caches" / case["name"]
    env = seeded_cache(case, caches / "minify", ns.timeout) if ns.fresh_cache else None
    code, seconds, log = run_minify(case, out / case["name"], ns.timeout, ns.jobs, env)
    row = score(case, code, seconds, out / case["name"], log)
    if (row.note and row.graph_ok is None and "backward" not in case.get("tags", [])) or (
            row.nothing_expected and not row.correct):
        (out / case["name"]).mkdir(parents=True, exist_ok=True)
        (out / case["name"] / "bench.log").write_text(log[-3000:])
    if row.nothing_expected:
        console.print(f"    {'correct: nothing failed' if row.correct else 'WRONG: ' + row.note} in {row.wall} s "
                      f"(expected exit 3, nothing failed)", highlight=False)
    else:
        console.print(f"    {'correct' if row.correct else row.note or 'WRONG'} in {row.wall} s, "
                      f"{row.compiles} compiles, ops {row.ops_after}/{row.min_ops}", highlight=False)
    if ns.vs_builtin and has_repro_level(case):
        console.print("    built-in minifier ...", highlight=False)
        cache = seeded_cache(case, caches / "builtin", ns.timeout) if ns.fresh_cache else None
        row.builtin = run_builtin(case, out, case_injections(out / case["name"], case), ns.no_isolate, ns.timeout,
                                  cache)
        console.print(f"    built-in: {row.builtin.get('outcome')} in {row.builtin.get('seconds')} s, "
                      f"{row.builtin.get('queries')} queries", highlight=False)
    elif ns.vs_builtin:
        console.print("    built-in minifier: skipped, nothing fails in this program", highlight=False)
    return row


def _builtin_flags(ns: argparse.Namespace) -> str:
    """How the built-in ran, as the bench's own options say it."""
    return "minify bench --vs-builtin" + (" --no-isolate" if ns.no_isolate else "") + (
        " --fresh-cache" if ns.fresh_cache else "")


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _write_json(path: Path, rows: list[Row], ns, devices: list[str]) -> None:
    import torch

    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    from minifier.bench.markdown import run_facts

    gpu = {"gpu": torch.cuda.get_device_name()} if "cuda" in devices and torch.cuda.is_available() else {}
    data = {**run_facts(devices), "torch": torch.__version__, "device": devices[0] if len(devices) == 1 else devices, **gpu,
            "vs_builtin": ns.vs_builtin, "no_isolate": ns.no_isolate,
            "fresh_cache": ns.fresh_cache,
            "summary": summary(rows), "cases": [asdict(r) | {"correct": r.correct} for r in rows]}
    path.write_text(json.dumps(data, indent=1, default=str))
