"""`minify bench`: run minify over the corpus and score every answer against the manifest.

Each case runs the way a user runs minify (`python -m minifier SCRIPT`, a fresh process), and
its report.json is checked against the case's known answer: the right graph, the right stage,
the culprit op still in the repro, the repro verified, how close the final op count is to
the minimum, the compiles it took, the wall time. Without a selection it runs the CPU cases
tagged `default` (sized to finish within about 30 minutes on 2 cores).

`--vs-builtin` also runs PyTorch's own minifier on each case, the documented way: the script
under TORCHDYNAMO_REPRO_AFTER=aot (level 4 for accuracy, 2 for compile and runtime errors,
3 for crashes), then `python minifier_launcher.py minify`. The built-in's minify process and
the sub-processes it starts must see the bug too: a bug planted through `compiler.inject`
lives only in the script's process, so the bench writes the same injections as a
sitecustomize.py on the PYTHONPATH of every built-in step after the dump run (which plants
them itself), standing in for a bug inside the installed torch. Bugs set through Inductor's
own test knobs (inject_relu_bug_TESTING_ONLY) travel in the launcher's config anyway.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "corpus"
REPRO_LEVEL = {"accuracy": 4, "compile_error": 2, "runtime_error": 2, "crash": 3}
# FX op names (manifest) -> aten names the built-in's AOT-level repro shows for them.
ATEN_NAMES = {"and_": ["bitwise_and", "logical_and"], "truediv": ["div"], "floordiv": ["div", "floor_divide"],
              "mean": ["mean", "sum"], "layer_norm": ["native_layer_norm", "var_mean", "rsqrt"],
              "gelu": ["gelu", "erf"], "silu": ["silu", "sigmoid"], "hardswish": ["hardswish", "clamp"],
              "embedding": ["embedding", "index"], "amax": ["amax", "max"], "mul": ["mul"]}


@dataclass
class Row:
    """One case's score (minify), and the built-in's where asked for."""

    name: str
    kind: str
    note: str = ""
    exit_code: int | None = None
    status: str | None = None
    graph_ok: bool | None = None
    stage_ok: bool | None = None
    kind_ok: bool | None = None
    culprit_ok: bool | None = None
    verified: bool | None = None
    ops_after: int | None = None
    min_ops: int | None = None
    ops: list = field(default_factory=list)
    compiles: int | None = None
    wall: float | None = None
    to_repro: float | None = None  # script start to the first verified repro (before blame)
    report: str | None = None
    builtin: dict | None = None

    @property
    def correct(self) -> bool:
        return bool(self.graph_ok and self.stage_ok and self.kind_ok and self.culprit_ok and self.verified)


def load_manifest() -> list[dict]:
    return json.loads((CORPUS / "manifest.json").read_text())


def select(cases: list[dict], names: str | None, substring: str | None, device: str, everything: bool) -> list[dict]:
    """--cases / -k pick cases (any device); otherwise the device's `default`-tagged cases (or all with --all)."""
    if names:
        wanted = [n.strip() for n in names.split(",") if n.strip()]
        unknown = [n for n in wanted if n not in {c["name"] for c in cases}]
        if unknown:
            raise SystemExit(f"minify bench: unknown case(s): {', '.join(unknown)}")
        return [c for c in cases if c["name"] in wanted]
    if substring:
        return [c for c in cases if substring in c["name"]]
    return [c for c in cases if c["device"] == device and (everything or "default" in c.get("tags", []))]


def project_env(extra_path: list[Path] = ()) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, extra_path), str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env["COLUMNS"] = "200"
    return env


def seeded_cache(case: dict, folder: Path, timeout: float) -> dict:
    """An Inductor cache as a user's is when they reach for a minifier: empty, then filled by
    one run of the failing script (its kernels and its graph's cache entries, nothing of any
    earlier minification). The environment that points a tool at it; the run is not timed."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    env = {"TORCHINDUCTOR_CACHE_DIR": str(folder)}
    _timed([sys.executable, str(CORPUS / case["script"])], folder, {**project_env(), **env}, timeout,
           folder.parent / f"{folder.name}-seed.log")
    return env


def run_minify(case: dict, out: Path, timeout: float, jobs: int,
               env: dict | None = None) -> tuple[int | None, float, str]:
    """minify on the case's script in a fresh process; (exit code or None on timeout, seconds, log tail)."""
    shutil.rmtree(out, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "minifier", str(CORPUS / case["script"]), "-o", str(out), "-q", "-j", str(jobs)]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=out.parent, env={**project_env(), **(env or {})}, capture_output=True,
                              text=True, timeout=timeout)
        code, log = proc.returncode, (proc.stdout + proc.stderr)[-3000:]
    except subprocess.TimeoutExpired:
        code, log = None, f"timed out after {timeout:.0f} s"
    return code, time.perf_counter() - start, log


def score(case: dict, code: int | None, seconds: float, out: Path) -> Row:
    row = Row(case["name"], case["kind"], exit_code=code, wall=round(seconds, 1), min_ops=case["min_ops"])
    report_path = out / "report.json"
    if code is None:
        row.note = "timed out"
        return row
    if not report_path.exists():
        row.note = f"no report (exit {code})"
        return row
    report = json.loads(report_path.read_text())
    row.report = str(report_path)
    row.status = report.get("status")
    if row.status == "nothing_failed":
        row.note = "nothing failed" + (" (expected: the bug is in the backward graph)"
                                       if "backward" in case.get("tags", []) else "")
        return row
    failure = report.get("failure") or {}
    row.graph_ok = failing_dynamo_graph(report) == case["graph_index"] and dynamo_graph_count(report) == case["graphs"]
    row.stage_ok = report.get("stage") == case["stage"]
    row.kind_ok = failure.get("kind") == case["kind"]
    row.ops = report.get("ops") or []
    all_ops = set(row.ops) | {op for bug in report.get("bugs", []) for op in bug.get("ops", [])}
    row.culprit_ok = bool(set(case["culprit_ops"]) & set(row.ops)) if row.ops else bool(
        set(case["culprit_ops"]) & all_ops)
    row.verified = report.get("verified")
    row.ops_after = report.get("ops_after")
    row.compiles = report.get("compiles")
    row.to_repro = report.get("seconds_to_repro")
    return row


def dynamo_graph_count(report: dict) -> int | None:
    """Graphs Dynamo produced (the report may also list the backward graph of each)."""
    rows = report.get("graphs") or []
    return sum(g.get("part", "forward") == "forward" for g in rows) if rows else report.get("graph_count")


def failing_dynamo_graph(report: dict) -> int | None:
    """The Dynamo graph of the failing graph record (a backward record counts as its forward graph)."""
    index = report.get("failing_graph")
    row = next((g for g in report.get("graphs") or [] if g.get("index") == index), None)
    return row.get("dynamo_graph", index) if row else index


def case_injections(out: Path, case: dict) -> list[dict]:
    """The bugs the script planted through compiler.inject, as the capture recorded them."""
    script_json = out / "work" / "capture" / "script.json"
    if script_json.exists():
        return json.loads(script_json.read_text()).get("injections", [])
    code = ("import json, runpy\nfrom compiler import inject\n"
            f"runpy.run_path({str(CORPUS / case['script'])!r}, run_name='bench_probe')\n"
            "print(json.dumps([i.to_dict() for i in inject.active()]))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=project_env(), capture_output=True, text=True, timeout=600)
    return json.loads(proc.stdout.strip().splitlines()[-1]) if proc.returncode == 0 and proc.stdout.strip() else []


def sitecustomize_source(injections: list[dict]) -> str:
    from compiler.inject import Injection, injection_source

    return ("# Written by minify bench: plants the case's bug in every Python process started with this\n"
            "# folder on PYTHONPATH, as if it were a bug in the installed torch.\n"
            "import torch\nimport torch._functorch.config\nimport torch._inductor.config\n"
            + injection_source([Injection.from_dict(d) for d in injections]))


def _timed(cmd: list[str], cwd: Path, env: dict, timeout: float, log: Path) -> tuple[int | None, float, str]:
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
        code, text = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as exc:
        code, text = None, f"{exc.stdout or ''}{exc.stderr or ''}\ntimed out after {timeout:.0f} s"
        text = text if isinstance(text, str) else str(text)
    log.write_text(text)
    return code, time.perf_counter() - start, text


def repro_ops(repro: Path) -> list[str]:
    """aten op names called in the forward of a built-in repro.py."""
    text = repro.read_text()
    body = text.split("def forward", 1)[1].split("\ndef ", 1)[0] if "def forward" in text else ""
    return re.findall(r"torch\.ops\.\w+\.(\w+)\.\w+\(", body)


def run_builtin(case: dict, work: Path, injections: list[dict], no_isolate: bool, timeout: float,
                cache: dict | None = None) -> dict:
    """PyTorch's after_aot minifier on the case, the documented two-step way; what it achieved.
    `cache`: environment naming the Inductor cache to use (seeded_cache)."""
    folder = work / "builtin" / case["name"]
    shutil.rmtree(folder, ignore_errors=True)
    site = folder / "site"
    site.mkdir(parents=True)
    cache = cache or {}
    if injections:
        (site / "sitecustomize.py").write_text(sitecustomize_source(injections))
    # A warm AOTAutograd cache skips the after_aot hook, so the dump would see no graph at all
    # (its FX graph cache, which the hook does see, stays on).
    dump_env = {**project_env(), "TORCHDYNAMO_REPRO_AFTER": "aot", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0",
                "TORCHDYNAMO_REPRO_LEVEL": str(REPRO_LEVEL[case["kind"]]),
                "TORCH_COMPILE_DEBUG_DIR": str(folder), **cache}
    result: dict = {"level": REPRO_LEVEL[case["kind"]], "carried_by": "sitecustomize" if injections else "config"}
    code, dump_s, _ = _timed([sys.executable, str(CORPUS / case["script"])], folder, dump_env, timeout,
                             folder / "dump.log")
    result.update(dump_rc=code, dump_seconds=round(dump_s, 1))
    launchers = sorted(folder.glob("torch_compile_debug/run_*/minifier/minifier_launcher.py"),
                       key=lambda p: p.stat().st_mtime)
    if not launchers:
        result.update(outcome="no launcher written", seconds=round(dump_s, 1))
        return result
    env = {**project_env([site]), **cache}
    cmd = [sys.executable, str(launchers[-1]), "minify", *(["--no-isolate"] if no_isolate else [])]
    code, minify_s, text = _timed(cmd, folder, env, timeout, folder / "minify.log")
    queries = re.findall(r"Made (\d+) queries", text)
    result.update(minify_rc=code, minify_seconds=round(minify_s, 1), seconds=round(dump_s + minify_s, 1),
                  queries=int(queries[-1]) if queries else None,
                  outcome="ok" if code == 0 and queries else
                  ("timed out" if code is None else text.strip().splitlines()[-1][:200] if text.strip() else f"rc {code}"))
    repro = folder / "repro.py"
    if code == 0 and repro.exists():
        ops = repro_ops(repro)
        names = {n for op in case["culprit_ops"] for n in [op, *ATEN_NAMES.get(op, [])]}
        rcode, _, _ = _timed([sys.executable, str(repro)], folder, env, timeout, folder / "repro.log")
        result.update(ops_after=len(ops), ops=ops, culprit_ok=bool(names & set(ops)),
                      reproduces=rcode is not None and rcode != 0)
    return result


def _mark(value) -> str:
    return "-" if value is None else ("[green]yes[/green]" if value else "[red]no[/red]")


def print_table(rows: list[Row], console, vs_builtin: bool) -> None:
    from rich.table import Table

    table = Table(title="minify bench")
    cols = ["case", "kind", "graph", "stage", "culprit in repro", "verified", "ops (final/min)", "compiles", "wall s",
            "to repro s"]
    if vs_builtin:
        cols += ["built-in wall s", "built-in queries", "built-in ops", "built-in reproduces", "wall ratio",
                 "compile ratio", "to repro / built-in"]
    for col in cols:
        table.add_column(col, overflow="fold")
    for r in rows:
        cells = [r.name, r.kind]
        if r.note and r.graph_ok is None:
            cells += [f"[yellow]{r.note}[/yellow]", "", "", "", "", "", f"{r.wall or ''}", ""]
        else:
            cells += [_mark(r.graph_ok), _mark(r.stage_ok), _mark(r.culprit_ok), _mark(r.verified),
                      f"{r.ops_after}/{r.min_ops}", f"{r.compiles}", f"{r.wall}", f"{r.to_repro or ''}"]
        if vs_builtin:
            b = r.builtin or {}
            ratio = (f"{b['seconds'] / r.wall:.1f}x" if b.get("seconds") and r.wall else "-")
            cratio = (f"{b['queries'] / r.compiles:.1f}x" if b.get("queries") and r.compiles else "-")
            # the measure: minify's time to a verified repro as a fraction of the built-in's time
            fraction = f"{r.to_repro / b['seconds']:.2f}x" if b.get("seconds") and r.to_repro else "-"
            cells += [f"{b.get('seconds', '-')}", f"{b.get('queries', '-')}",
                      f"{b.get('ops_after', '-')}" if b.get("outcome") == "ok" else f"[yellow]{b.get('outcome', '-')}[/yellow]",
                      _mark(b.get("reproduces")), ratio, cratio, fraction]
        table.add_row(*cells)
    console.print(table)


def summary(rows: list[Row]) -> dict:
    scored = [r for r in rows if r.graph_ok is not None]
    walls = sorted(r.wall for r in rows if r.wall is not None)
    out = {"cases": len(rows), "scored": len(scored), "correct": sum(r.correct for r in scored),
           **{k: sum(bool(getattr(r, k)) for r in scored) for k in ("graph_ok", "stage_ok", "kind_ok", "culprit_ok",
                                                                      "verified")},
           "at_min_ops": sum(r.ops_after is not None and r.ops_after <= r.min_ops for r in scored),
           "total_wall": round(sum(walls), 1), "median_wall": walls[len(walls) // 2] if walls else None,
           "total_compiles": sum(r.compiles or 0 for r in scored)}
    built = [r.builtin for r in rows if r.builtin and r.builtin.get("seconds")]
    if built:
        out["builtin_total_wall"] = round(sum(b["seconds"] for b in built), 1)
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="minify bench", description="Run minify over the corpus and score it.")
    p.add_argument("--cases", help="comma-separated case names (any device)")
    p.add_argument("-k", dest="substring", help="cases whose name contains this")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cpu", help="device of the default subset")
    p.add_argument("--all", action="store_true", help="every case of --device, not only those tagged default")
    p.add_argument("--json", type=Path, default=Path("minify-bench/bench.json"), help="where to write the results")
    p.add_argument("-o", "--out", type=Path, default=Path("minify-bench"), help="folder for each case's minify output")
    p.add_argument("-j", "--jobs", type=int, default=2, help="minify worker processes per case")
    p.add_argument("--timeout", type=float, default=1200.0, help="seconds per case and per built-in step")
    p.add_argument("--vs-builtin", action="store_true", help="also run PyTorch's built-in minifier on each case")
    p.add_argument("--no-isolate", action="store_true", help="run the built-in minifier with --no-isolate")
    p.add_argument("--fresh-cache", action="store_true",
                   help="give each tool, on each case, its own empty Inductor cache that one untimed run of "
                        "the script has filled (as a user's is); otherwise both share the machine's warm cache")
    return p


def main(argv: list[str]) -> int:
    ns = parser().parse_args(argv)
    from rich.console import Console

    console = Console(stderr=True)
    cases = select(load_manifest(), ns.cases, ns.substring, ns.device, ns.all)
    if not cases:
        console.print("minify bench: no case selected")
        return 2
    cuda = _cuda_available() if any(c["device"] == "cuda" for c in cases) else False
    out = ns.out.resolve()
    rows: list[Row] = []
    for i, case in enumerate(cases, 1):
        if case["device"] == "cuda" and not cuda:
            rows.append(Row(case["name"], case["kind"], note="skipped: needs CUDA", min_ops=case["min_ops"]))
            console.print(f"[{i}/{len(cases)}] {case['name']}: [yellow]skipped, no CUDA here[/yellow]")
            continue
        console.print(f"[{i}/{len(cases)}] {case['name']}: minify ...", highlight=False)
        caches = out / "caches" / case["name"]
        env = seeded_cache(case, caches / "minify", ns.timeout) if ns.fresh_cache else None
        code, seconds, log = run_minify(case, out / case["name"], ns.timeout, ns.jobs, env)
        row = score(case, code, seconds, out / case["name"])
        if row.note and row.graph_ok is None and "backward" not in case.get("tags", []):
            (out / case["name"]).mkdir(parents=True, exist_ok=True)
            (out / case["name"] / "bench.log").write_text(log)
        console.print(f"    {'correct' if row.correct else row.note or 'WRONG'} in {row.wall} s, "
                      f"{row.compiles} compiles, ops {row.ops_after}/{row.min_ops}", highlight=False)
        if ns.vs_builtin:
            console.print(f"    built-in minifier ...", highlight=False)
            cache = seeded_cache(case, caches / "builtin", ns.timeout) if ns.fresh_cache else None
            row.builtin = run_builtin(case, out, case_injections(out / case["name"], case), ns.no_isolate, ns.timeout,
                                      cache)
            console.print(f"    built-in: {row.builtin.get('outcome')} in {row.builtin.get('seconds')} s, "
                          f"{row.builtin.get('queries')} queries", highlight=False)
        rows.append(row)
        _write_json(ns.json, rows, ns)  # after every case: a long run interrupted still leaves results
    print_table(rows, Console(width=max(Console().width, 160)), ns.vs_builtin)
    totals = summary(rows)
    console.print(f"correct {totals['correct']}/{totals['scored']} scored cases; total wall {totals['total_wall']} s; "
                  f"results in {ns.json}", highlight=False)
    expected_misses = {r.name for r in rows if "backward" in r.note or r.note.startswith("skipped")}
    return 0 if all(r.correct or r.name in expected_misses for r in rows) else 1


def _cuda_available() -> bool:
    import torch

    return torch.cuda.is_available()


def _write_json(path: Path, rows: list[Row], ns) -> None:
    import torch

    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"torch": torch.__version__, "device": ns.device, "vs_builtin": ns.vs_builtin, "no_isolate": ns.no_isolate,
            "fresh_cache": ns.fresh_cache,
            "summary": summary(rows), "cases": [asdict(r) | {"correct": r.correct} for r in rows]}
    path.write_text(json.dumps(data, indent=1, default=str))
