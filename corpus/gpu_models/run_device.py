"""Run minify on the GPU model cases of manifest.json, one after another, within a deadline.

    PYTHONPATH=.:TRANSFORMERS_DIR python corpus/gpu_models/run_device.py --out DIR --work DIR
        [--deadline S] [--first NAME] [--only a,b] [--skip a,b] [--kinds a,b] [--jobs N] [--cards 0,1,..]
        [--vs-builtin [--markdown]]

Order: the first device-assert case alone first (a safety check: the GPU must still answer after
it), then rounds that give every model and mode one plant before any gets a second, the kinds
rotated. Per (model, mode) the script alone is timed once (no bug planted). After every minify run
a fresh process must still reach the GPU; if it cannot, or nvidia-smi asks for a reset, the runner
stops at once. Each run's summary is one line of OUT/results.jsonl (its log in OUT/runner.log);
minify's output folders go to WORK/minify/, and each run's report.json, repro.py and issue.md to
WORK/runs/.

With --jobs N (N > 1) the accuracy and compile-error cases run N at a time, and the device asserts
after them one at a time with nothing else running: minify's machine-wide GPU gate already keeps
asserts apart, but an assert case's wall time is what is measured against the script's, so it runs
alone. Scripts are not timed alone while cases run side by side.

With --cards 0,1,.. (a host of several cards) the cases are dealt round-robin to those cards, each
running its share one after another, pinned with CUDA_VISIBLE_DEVICES and given a GPU gate of its
own (MINIFY_GPU_GATE, docs/gpu-safety.md): a case still runs alone on its card, and the health
check after it asks that card.

With --vs-builtin PyTorch's own minifier runs on each case after minify, the documented two-step
way and as `minify bench --vs-builtin` runs it (minifier/bench/builtin.py: the plant reaches its
processes as a sitecustomize.py, its launcher as torch 2.13 writes it); a fresh process must reach
the GPU after it too. --markdown then prints the rows of this run as a table under one line naming
the date, commit, machine and torch, with minify's time over the built-in's where the built-in
gave a repro.
"""
from __future__ import annotations

import argparse
import json
import shutil
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
KINDS = ("accuracy", "compile_error", "device_assert")
HEALTH = "import torch; torch.ones(1, device='cuda').sum().item(); print('ok')"


def ordered(cases: list[dict], first: str | None = None) -> list[dict]:
    """One device assert first (`first`, else the first in the rounds), then rounds: each (model,
    mode) once a round, the kind rotated."""
    models = list(dict.fromkeys(c["script"] for c in cases))
    by_key = {(c["script"], c["mode"], c["kind"]): c for c in cases}
    order = []
    for r in range(len(KINDS)):
        for mode in ("inference", "training"):
            for i, script in enumerate(models):
                kind = KINDS[(i + r + (mode == "training")) % len(KINDS)]
                if (script, mode, kind) in by_key:
                    order.append(by_key[(script, mode, kind)])
    head = next((c for c in order if c["name"] == first or (first is None and c["kind"] == "device_assert")), None)
    return ([head] if head else []) + [c for c in order if c is not head]


def card_env(card: int | None) -> dict | None:
    """The environment of runs pinned to one card, with a GPU gate of that card's own."""
    if card is None:
        return None
    return {**os.environ, "CUDA_VISIBLE_DEVICES": str(card),
            "MINIFY_GPU_GATE": str(Path(tempfile.gettempdir()) / f"minify-gpu-card{card}.lock")}


def gpu_health(env: dict | None = None) -> dict:
    """A fresh process reaches the GPU, and nvidia-smi does not ask for a reset."""
    start = time.time()
    try:
        p = subprocess.run([sys.executable, "-c", HEALTH], capture_output=True, text=True, timeout=90, env=env)
        ok, text = p.returncode == 0 and "ok" in p.stdout, (p.stdout + p.stderr).strip()[-300:]
    except subprocess.TimeoutExpired:
        ok, text = False, "health check timed out after 90 s"
    try:
        smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as exc:
        smi = f"nvidia-smi: {exc}"
    if "requires reset" in smi.lower() or "No CUDA GPUs" in text:
        ok = False
    return {"ok": ok, "seconds": round(time.time() - start, 1), "detail": "" if ok else text + " | " + smi[-300:]}


def script_alone(case: dict, log, env: dict | None = None) -> float | None:
    start = time.time()
    p = subprocess.run([sys.executable, str(HERE / case["script"]), *case["args"]], capture_output=True, text=True,
                       timeout=300, env=env)
    log.write(f"script alone {case['script']} {case['args']}: rc {p.returncode} {p.stdout.strip()[-200:]} "
              f"{p.stderr.strip()[-300:] if p.returncode else ''}\n")
    return round(time.time() - start, 1) if p.returncode == 0 else None


def summary(case: dict, out: Path, code: int | None, wall: float) -> dict:
    report = out / "report.json"
    d = json.loads(report.read_text()) if report.exists() else {}
    bugs = [{"ops": b.get("ops"), "verified": b.get("verified"), "kind": (b.get("failure") or {}).get("kind"),
             "stage": b.get("stage"), "graph": b.get("failing_graph"), "part": b.get("part")}
            for b in d.get("bugs", [])]
    first = bugs[0] if bugs else {}
    return {"name": case["name"], "model": case["model"], "mode": case["mode"], "plant": case["inject"],
            "exit": code, "status": d.get("status"), "wall": round(wall, 1), "compiles": d.get("compiles"),
            "ops": first.get("ops"), "verified": first.get("verified"),
            "expected_op_found": bool(set(first.get("ops") or []) & set(case["expected_ops"])),
            "bugs": bugs, "minify_gpu_health": d.get("gpu_health")}


def builtin_run(case: dict, root: Path, timeout: float, env: dict | None = None) -> dict:
    """PyTorch's minifier on the case, as the bench runs it (minifier/bench/builtin.py)."""
    from compiler.inject import parse_spec
    from minifier.bench.builtin import run_builtin

    bench_case = {**case, "script": f"gpu_models/{case['script']}", "culprit_ops": case["expected_ops"]}
    pinned = {k: v for k, v in (env or {}).items() if k in ("CUDA_VISIBLE_DEVICES", "MINIFY_GPU_GATE")}
    return run_builtin(bench_case, root, [parse_spec(case["inject"]).to_dict()], False, timeout, pinned or None)


def table(rows: list[dict]) -> str:
    """The rows as a markdown table under the line naming the run (minify bench --markdown's)."""
    from minifier.bench.markdown import builtin_answer, run_facts

    facts = run_facts(["cuda"])
    lines = [f"corpus/gpu_models/run_device.py --vs-builtin, {facts['date']}, commit {facts['commit']}, "
             f"{facts['machine']}, torch {facts['torch']}", "",
             "| case | plant | minify | repro ops | verified | built-in | built-in's answer | minify / built-in |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = r.get("builtin") or {}
        works = b.get("outcome") == "ok" and b.get("reproduces") is not False and b.get("seconds")
        ratio = f"{r['wall'] / b['seconds']:.2f}x" if works else "-"
        lines.append(f"| {r['name']} | `{r['plant']}` | {r['wall']} s | {', '.join(r.get('ops') or []) or '-'} | "
                     f"{r.get('verified')} | {str(b['seconds']) + ' s' if b.get('seconds') else '-'} | "
                     f"{builtin_answer(b)} | {ratio} |")
    return "\n".join(lines)


def run_one(case: dict, root: Path, max_time: float, log, env: dict | None = None) -> dict:
    """minify on one case, its bug planted with --inject; the summary of its report."""
    out = root / "minify" / case["name"]
    cmd = [sys.executable, "-m", "minifier", str(HERE / case["script"]), "-o", str(out), "--inject", case["inject"],
           "--max-time", str(int(max_time)), "--force", "--", *case["args"]]
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=max_time + 30, env=env)
        code, text = p.returncode, p.stdout + p.stderr
    except subprocess.TimeoutExpired as exc:
        code, text = None, f"timed out: {exc}"
    row = summary(case, out, code, time.time() - start)
    log.write(f"== {case['name']} exit {code} in {row['wall']} s\n{text[-1500:]}\n")
    keep = root / "runs" / case["name"]
    keep.mkdir(parents=True, exist_ok=True)
    for name in ("report.json", "repro.py", "issue.md", "work/timeline.json"):
        if (out / name).exists():
            shutil.copy(out / name, keep / Path(name).name)
    (keep / "console.txt").write_text(text)
    return row


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="run_device.py")
    p.add_argument("--out", type=Path, required=True, help="results.jsonl and runner.log")
    p.add_argument("--work", type=Path, required=True, help="minify's output folders")
    p.add_argument("--first", help="the case to run first (default: the first device assert)")
    p.add_argument("--skip", default="", help="comma-separated case names not to run")
    p.add_argument("--deadline", type=float, default=480.0, help="seconds from start; no run starts after")
    p.add_argument("--only", help="comma-separated case names, in this order")
    p.add_argument("--max-time", type=float, default=150.0, help="minify --max-time per run")
    p.add_argument("--no-alone", action="store_true", help="do not time the script alone (saves its compile)")
    p.add_argument("--kinds", default=",".join(KINDS), help="comma-separated kinds to run")
    p.add_argument("--jobs", type=int, default=1, help="cases that cannot assert run this many at a time")
    p.add_argument("--cards", help="comma-separated cards to deal the cases to, each running its share in turn")
    p.add_argument("--vs-builtin", action="store_true", help="also run PyTorch's own minifier on each case")
    p.add_argument("--markdown", action="store_true", help="print this run's rows as a table at the end")
    ns = p.parse_args(argv)
    cases = json.loads((HERE / "manifest.json").read_text())
    if ns.only:
        named = {c["name"]: c for c in cases}
        cases = [named[n] for n in ns.only.split(",")]
    else:
        cases = ordered(cases, ns.first)
    cases = [c for c in cases if c["name"] not in ns.skip.split(",") and c["kind"] in ns.kinds.split(",")]
    ns.out.mkdir(parents=True, exist_ok=True)
    code = run_cases(cases, ns)
    if ns.markdown:
        print(table(RECORDED))
    return code


def run_cases(cases: list[dict], ns) -> int:
    with open(ns.out / "results.jsonl", "a") as results, open(ns.out / "runner.log", "a") as log:
        if ns.jobs > 1:
            side = [c for c in cases if c["kind"] != "device_assert"]
            cases = [c for c in cases if c["kind"] == "device_assert"]
            if not run_side_by_side(side, ns, results, log):
                return 2
        if ns.cards:
            cards = [int(c) for c in ns.cards.split(",")]
            with ThreadPoolExecutor(len(cards)) as pool:
                codes = list(pool.map(lambda i: run_in_turn(cases[i::len(cards)], ns, results, log, cards[i]),
                                      range(len(cards))))
            return max(codes)
        return run_in_turn(cases, ns, results, log)


_RECORDING = threading.Lock()
RECORDED: list[dict] = []  # this run's rows, for --markdown


def checked(row: dict, case: dict, ns, env: dict | None = None) -> dict:
    """`row` with the GPU checked after minify, and with --vs-builtin the built-in's run on the
    case and the GPU checked again after it (`gpu_after` holds the later check's answer)."""
    row["gpu_after"] = gpu_health(env)
    if ns.vs_builtin and row["gpu_after"]["ok"]:
        row["builtin"] = builtin_run(case, ns.work, max(ns.max_time, 300.0), env)
        row["gpu_after_minify"], row["gpu_after"] = row["gpu_after"], gpu_health(env)
    return row


def record(row: dict, results, log) -> bool:
    """One result line; False when the GPU no longer answers (the runner stops)."""
    with _RECORDING:
        RECORDED.append(row)
        results.write(json.dumps(row) + "\n")
        results.flush()
        log.flush()
        print(json.dumps({k: row.get(k) for k in ("name", "card", "exit", "status", "ops", "verified", "wall",
                                                   "script_alone")}
                         | {"gpu_ok": row["gpu_after"]["ok"], "bugs": len(row["bugs"])}), flush=True)
    if not row["gpu_after"]["ok"]:
        print(f"STOP: the GPU does not answer after {row['name']}: {row['gpu_after']['detail']}", flush=True)
    return row["gpu_after"]["ok"]


def run_side_by_side(cases: list[dict], ns, results, log) -> bool:
    """Cases that cannot assert, ns.jobs at a time, within the deadline."""
    start = time.time()

    def one(case: dict) -> dict | None:
        left = ns.deadline - (time.time() - start)
        if left < 60:
            return None
        row = run_one(case, ns.work, min(ns.max_time, left - 45), log)
        row["script_alone"] = None
        return checked(row, case, ns)

    ok = True
    with ThreadPoolExecutor(ns.jobs) as pool:
        for row in pool.map(one, cases):
            if row is not None:
                ok = record(row, results, log) and ok
    ns.deadline -= time.time() - start
    return ok


def run_in_turn(cases: list[dict], ns, results, log, card: int | None = None) -> int:
    start, alone, env = time.time(), {}, card_env(card)
    for case in cases:
        left = ns.deadline - (time.time() - start)
        if left < 60:
            log.write(f"deadline: {case['name']} and later not run\n")
            break
        key = (case["script"], case["mode"])
        if key not in alone and not ns.no_alone:
            alone[key] = script_alone(case, log, env)
        row = run_one(case, ns.work, min(ns.max_time, left - 45), log, env)
        row["script_alone"], row["card"] = alone.get(key), card
        if not record(checked(row, case, ns, env), results, log):
            return 2
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
