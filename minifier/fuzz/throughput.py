"""`minify fuzz throughput`: programs checked per minute of a campaign with 1, 4 and 8 worker
processes on this machine, as a markdown table; no Dask needed (issue 50: 8 workers should give >= 6x one).

Each row runs N plain `minify fuzz --shard I/N --max-time T` processes side by side (the shards
of one seed: disjoint units, no end of examples, each stopping when its T seconds are spent) and
reads each one's fuzz.json: examples drawn, programs checked and seconds of campaign (after its
worker started). The rate is of programs checked (every program compiled and judged: drawn ones
and those hypothesis tries while shrinking a failure): a shard that meets a failure spends its
time shrinking, not drawing, so examples drawn alone say more about where the failures fell than
about the machine's throughput; the table has both.
Shards run with --no-reduce: a finding's reduction comes after the campaign, is not drawing, and
would leave a shard that found something still reducing when its row's time is up.
The row's rate is the sum of each shard's programs per minute; the speedup is against the first
row. Every worker gets the same OMP_NUM_THREADS in every row, cores // the most workers of any
row (--threads; 2 for 1,4,8 on 16 cores), so that the largest row does not oversubscribe the
cores and a row's speedup is that of its workers alone: with `--threads auto` (cores // N per
row) a lone worker runs its few heavy programs (large matmuls, sorts) on all 16 cores and 8
workers each on 2, and the table mixes the two effects (measured: docs/fuzzing.md). Each worker
compiles in-process, as every minify worker does. Options it does not know go to
every shard (--ops, --dtypes, --device, --backward, ...).

Every row starts from its own copy of one Inductor kernel cache that a short untimed campaign of
another seed filled first (C++'s prefix header and the common kernels built): with one shared
cache a later row would find the kernels an earlier row compiled for the same seed and look
faster than it is, and the first row alone would pay the machine's first builds.

Shards draw units of --unit-examples programs (2 here, not a campaign's 20): a unit's programs
share a seed and their cost (a unit whose ops compile slowly is slow throughout), so with 20 a
one-worker row spends its time on the first unit or two while an 8-worker row samples eight; with
2 every row runs through many units and the rows measure a like mix of the same work.
The header names logical and physical cores (hyper-threads share a core's units).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_INTERNAL, EXIT_OK

WARM_EXAMPLES = 5  # the untimed warm-up campaign's examples
GRACE = 75.0  # seconds past --seconds a row may take (startup, a shrink in flight) before its shards are ended
# (an ended shard writes no fuzz.json and shows as not answered); it bounds a default run's length


def parser() -> argparse.ArgumentParser:
    from repro.one_line_parser import OneLineParser

    p = OneLineParser(prog="minify fuzz throughput", description="Programs checked per minute with 1, 4 and 8 worker "
                      "processes (plain local processes, no Dask); a markdown table. Other options go to every shard.")
    p.add_argument("--workers", default="1,4,8", help="comma-separated worker counts, one row each (default 1,4,8)")
    p.add_argument("--seconds", type=float, default=80.0, help="fuzzing seconds of each row (default 80)")
    p.add_argument("--warm-seconds", type=float, default=60.0,
                   help="at most this long for the untimed warm-up that fills the kernel cache (default 60)")
    p.add_argument("--seed", type=int, default=7, help="the campaign's seed, the same for every row (default 7)")
    p.add_argument("--threads", default=None, metavar="T|auto",
                   help="OpenMP threads of every worker (default: cores // the largest worker count, the same in every "
                        "row); auto: cores // N in a row of N workers")
    p.add_argument("--unit-examples", type=int, default=2, metavar="K",
                   help="programs drawn per unit in every shard (default 2: each row samples many units)")
    p.add_argument("-o", "--out", type=Path, default=Path("minify-throughput"), help="folder for the shards' output")
    return p


def counts(text: str) -> list[int]:
    try:
        found = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        found = []
    if not found or min(found) < 1:
        raise ValueError(f"--workers {text}: expected positive counts, e.g. 1,4,8")
    return found


def usable_cores() -> int:
    """The cores this process may run on (`taskset`, a container's CPU set), not the machine's."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # no affinity on this platform
        return os.cpu_count() or 1


def physical_cores() -> int | None:
    """How many distinct physical cores the usable ones are (Linux sysfs), or None where unknown."""
    try:
        cpus = os.sched_getaffinity(0)
        cores = {tuple(Path(f"/sys/devices/system/cpu/cpu{n}/topology/{name}").read_text().strip()
                       for name in ("physical_package_id", "core_id")) for n in cpus}
    except (AttributeError, OSError):
        return None
    return len(cores)


def shard_environment(threads: int, cache: Path) -> dict:
    return {**os.environ, "OMP_NUM_THREADS": str(threads), "TORCHINDUCTOR_FX_GRAPH_CACHE": "0",
            "TORCHINDUCTOR_AUTOGRAD_CACHE": "0", "TORCHINDUCTOR_CACHE_DIR": str(cache),
            "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).resolve().parents[2]),
                                                        os.environ.get("PYTHONPATH")]))}


def warm_cache(ns, extra: list[str]) -> Path:
    """The kernel cache every row starts from a copy of: a few examples of another seed built."""
    cache = ns.out.resolve() / "warm" / "cache"
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache.parent / "warm.log", "w") as log:
        proc = start_fuzz(["--seed", str(ns.seed + 1), "--max-examples", str(WARM_EXAMPLES)], ns, extra,
                          cache.parent / "fuzz", shard_environment(usable_cores(), cache), log, ns.warm_seconds)
        end_by(proc, time.monotonic() + ns.warm_seconds + GRACE)  # what it built so far is the warm cache
    return cache


def start_fuzz(args: list[str], ns, extra: list[str], out: Path, env: dict, log,
               seconds: float | None = None) -> subprocess.Popen:
    """`minify fuzz ARGS` for `seconds` (--seconds), no reduction, quiet, into `out`, in a session of its own."""
    return subprocess.Popen([sys.executable, "-m", "minifier", "fuzz", *args, "--max-time", str(seconds or ns.seconds),
                             "--unit-examples", str(ns.unit_examples), "--no-reduce", "-q", "-o", str(out), *extra],
                            env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def end_by(proc: subprocess.Popen, deadline: float) -> None:
    """Wait for `proc` until `deadline` (time.monotonic()); then kill its session."""
    try:
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def threads_of(text: str | None, workers: list[int]) -> int | None:
    """Every worker's OpenMP threads (None: auto, cores // N per row); a ValueError says what is wrong."""
    if text == "auto":
        return None
    if text is None:
        return max(1, usable_cores() // max(workers))
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"--threads {text}: expected a positive count or auto")
    return int(text)


def run_row(workers: int, ns, extra: list[str], warm: Path) -> dict:
    """N shard processes side by side; their programs per minute, summed."""
    threads = ns.each or max(1, usable_cores() // workers)
    row = ns.out.resolve() / f"w{workers}"
    shutil.copytree(warm, row / "cache")
    env = shard_environment(threads, row / "cache")
    folders = [row / f"s{i}" for i in range(1, workers + 1)]
    logs = [open(folder.parent / f"{folder.name}.log", "w") for folder in folders]  # what a shard said, if it failed
    start = time.monotonic()
    procs = [start_fuzz(["--seed", str(ns.seed), "--shard", f"{i}/{workers}"], ns, extra, folder, env, log)
             for i, (folder, log) in enumerate(zip(folders, logs), 1)]
    for proc in procs:
        end_by(proc, start + ns.seconds + GRACE)
    for log in logs:
        log.close()
    wall = time.monotonic() - start
    shards = []
    for folder in folders:
        try:
            data = json.loads((folder / "fuzz.json").read_text())
            shards.append((data["examples"], data["compiles"], data.get("campaign_seconds") or data["seconds"]))
        except (OSError, ValueError, KeyError):
            shards.append((0, 0, 0.0))
    rates = [60.0 * checked / seconds for _, checked, seconds in shards if seconds]
    rate = sum(rates)
    return {"workers": workers, "threads": threads, "examples": sum(e for e, _, _ in shards),
            "checked": sum(c for _, c, _ in shards), "answered": sum(1 for _, _, s in shards if s),
            "wall": round(wall, 1), "per_minute": round(rate, 1), "shard_rates": [round(r, 1) for r in rates],
            "exits": [p.returncode for p in procs]}


def markdown(rows: list[dict], ns, extra: list[str]) -> str:
    import platform

    import torch

    base = rows[0]["per_minute"] / rows[0]["workers"] if rows and rows[0]["per_minute"] else None
    physical = physical_cores()
    lines = [f"{time.strftime('%Y-%m-%d')}, {usable_cores()} cores"
             f"{f' ({physical} physical)' if physical else ''} ({platform.processor() or platform.machine()}), "
             f"torch {torch.__version__}; `minify fuzz throughput --seconds {ns.seconds:g} --seed {ns.seed} "
             f"--unit-examples {ns.unit_examples}{' --threads ' + ns.threads if getattr(ns, 'threads', None) else ''}"
             f"{f' --warm-seconds {ns.warm_seconds:g}' if getattr(ns, 'warm_seconds', None) else ''}"
             f"{' ' + ' '.join(extra) if extra else ''}`", "",
             "| workers | OMP threads each | examples drawn | programs checked | shards answered | wall (s) "
             "| programs/min | vs 1 worker |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        speedup = f"{r['per_minute'] / base:.2f}x" if base else "-"
        lines.append(f"| {r['workers']} | {r['threads']} | {r['examples']} | {r['checked']} | "
                     f"{r['answered']}/{r['workers']} | "
                     f"{r['wall']} | {r['per_minute']} | {speedup} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    ns, extra = parser().parse_known_args(argv)
    try:
        workers = counts(ns.workers)
        ns.each = threads_of(ns.threads, workers)
    except ValueError as exc:
        print(f"minify fuzz throughput: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if ns.warm_seconds <= 0 or ns.seconds <= 0:
        print("minify fuzz throughput: --seconds and --warm-seconds must be greater than zero", file=sys.stderr)
        return EXIT_BAD_INPUT
    if ns.unit_examples < 1:
        print(f"minify fuzz throughput: --unit-examples {ns.unit_examples}: must be greater than zero", file=sys.stderr)
        return EXIT_BAD_INPUT
    if ns.out.exists() and any(ns.out.iterdir()):
        print(f"minify fuzz throughput: {ns.out} is not empty: give a new folder (-o)", file=sys.stderr)
        return EXIT_BAD_INPUT
    print("warming a kernel cache (untimed) ...", file=sys.stderr, flush=True)
    warm = warm_cache(ns, extra)
    rows = []
    for n in workers:
        print(f"{n} worker(s), {ns.seconds:g} s ...", file=sys.stderr, flush=True)
        rows.append(run_row(n, ns, extra, warm))
        print(f"  {rows[-1]['examples']} examples drawn, {rows[-1]['checked']} programs checked, "
              f"{rows[-1]['per_minute']} programs per minute, exits {rows[-1]['exits']}",
              file=sys.stderr, flush=True)
    (ns.out / "throughput.json").write_text(json.dumps(rows, indent=1))
    print(markdown(rows, ns, extra))
    if all(r["answered"] == r["workers"] for r in rows):
        return EXIT_OK
    print(f"minify fuzz throughput: some shard wrote no fuzz.json (ended {GRACE:g} s past --seconds, or failed: "
          f"{ns.out}/w*/s*.log); its row counts only the shards that answered", file=sys.stderr)
    return EXIT_OK if all(r["answered"] for r in rows) else EXIT_INTERNAL
