"""`minify batch [--cluster ADDRESS | --jobs N] -o OUT SCRIPT... [-- MINIFY OPTIONS]`: each script
minified into OUT/<name>/ (minifier.batch.task), a line as each ends and one every 30 s
meanwhile, then OUT/batch.json and a table (script, exit, bugs, ops, verified, time).

Locally the scripts run one after another, or --jobs N at once; with --cluster each is a task on
a Dask distributed cluster (the `cluster` extra), retried elsewhere when its worker is lost.
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_CANNOT_WRITE, EXIT_INTERRUPTED, EXIT_NOT_REPRODUCED, EXIT_OK
from repro.one_line_parser import OneLineParser

RETRIES = 2  # a task whose minify was stopped (SIGTERM, a signal) runs again; a lost worker's task too
BEAT = 30.0


def parser() -> argparse.ArgumentParser:
    p = OneLineParser(prog="minify batch", usage="minify batch [-o OUT] [--jobs N | --cluster ADDRESS] SCRIPT... "
                                                 "[-- MINIFY OPTIONS]",
                      description="Minify many failing scripts, each into OUT/<its name>/, one task each; "
                                  "options after -- go to every minify run (e.g. -- --max-time 600 -j 1).")
    p.add_argument("scripts", type=Path, nargs="+", metavar="SCRIPT", help="failing Python scripts")
    p.add_argument("-o", "--out", type=Path, default=Path("minify-batch"), help="output folder (default minify-batch)")
    p.add_argument("--jobs", type=int, default=1, help="without --cluster: scripts minified at once (default 1)")
    p.add_argument("--cluster", metavar="ADDRESS", help="run each script as a task on this Dask scheduler "
                                                        "(tcp://host:8786; pip install 'minify[cluster]')")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress lines, only the table")
    return p


def names(scripts: list[Path]) -> list[str]:
    """Each script's output folder name: its stem, with -2, -3... where stems repeat."""
    seen: dict[str, int] = {}
    out = []
    for script in scripts:
        seen[script.stem] = seen.get(script.stem, 0) + 1
        out.append(script.stem if seen[script.stem] == 1 else f"{script.stem}-{seen[script.stem]}")
    return out


def bad_input(ns) -> str | None:
    """One line naming what is wrong, before anything runs."""
    for script in ns.scripts:
        if not script.is_file():
            return f"no such script: {script}"
        if script.suffix != ".py":
            return f"not a Python script: {script}"
    if ns.jobs < 1:
        return f"--jobs {ns.jobs}: must be at least 1"
    return None


def submit_local(ns, tasks: list[tuple]):
    from concurrent.futures import ThreadPoolExecutor

    from minifier.batch.task import minify_task

    pool = ThreadPoolExecutor(max_workers=ns.jobs)
    return pool, [pool.submit(minify_task, *task) for task in tasks]


def submit_cluster(ns, tasks: list[tuple]):
    from dask.distributed import Client

    from minifier.batch.task import minify_task

    try:
        client = Client(ns.cluster, timeout="20s")
    except ValueError as exc:  # not an address (no port, an unknown protocol): as unreachable
        raise OSError(str(exc)) from None
    futures = [client.submit(minify_task, *task, retries=RETRIES, pure=False, key=f"minify-batch-{task[1]}-"
                             f"{os.urandom(3).hex()}") for task in tasks]
    return client, futures


def _wait(pending: set, timeout: float):
    """(done, pending) as concurrent.futures.wait and dask's wait say it (dask raises on timeout)."""
    if pending and hasattr(next(iter(pending)), "key"):
        from dask.distributed import wait
        try:
            return wait(pending, timeout=timeout, return_when="FIRST_COMPLETED")
        except TimeoutError:
            return set(), pending
    from concurrent.futures import FIRST_COMPLETED, wait
    return wait(pending, timeout=timeout, return_when=FIRST_COMPLETED)


def collect(futures: list, tasks: list[tuple], say, start: float, beat: float = BEAT) -> list[dict]:
    """One row per task, in the order given, each said as it ends; a line every `beat` s meanwhile."""
    rows: dict[int, dict] = {}
    index = {id(f): i for i, f in enumerate(futures)}
    pending = set(futures)
    while pending:
        done, pending = _wait(pending, beat)
        if not done:
            say(f"{time.monotonic() - start:7.1f}s {len(rows)}/{len(tasks)} done, {len(pending)} running or waiting")
        for future in done:
            i = index[id(future)]
            script, name = tasks[i][0], tasks[i][1]
            try:
                rows[i] = future.result()
            except Exception as exc:  # stopped every time, or every worker that took it was lost
                rows[i] = {"script": script, "name": name, "folder": None, "exit": None, "seconds": None,
                           "worker": None, "bugs": 0, "ops_before": None, "ops_after": None, "verified": False,
                           "error": " ".join(str(exc).split())[:300]}
            say(f"{time.monotonic() - start:7.1f}s [{len(rows)}/{len(tasks)}] {describe(rows[i])}")
    return [rows[i] for i in range(len(tasks))]


def describe(row: dict) -> str:
    if row["exit"] is None:
        return f"{row['name']}: not finished: {row.get('error')}"
    return (f"{row['name']}: exit {row['exit']}, {row['bugs']} bug(s), ops {ops(row)}, "
            f"{'verified' if row['verified'] else 'not verified'}, {row['seconds']} s on {row['worker']}")


def ops(row: dict) -> str:
    return "-" if row["ops_before"] is None else f"{row['ops_before']}->{row['ops_after']}"


def print_table(rows: list[dict], console) -> None:
    from rich.table import Table

    table = Table(title="minify batch")
    for column in ("script", "exit", "bugs", "ops", "verified", "time (s)"):
        table.add_column(column, justify="left" if column == "script" else "right")
    for row in rows:
        table.add_row(row["name"], "lost" if row["exit"] is None else str(row["exit"]), str(row["bugs"]), ops(row),
                      "yes" if row["verified"] else "no", "-" if row["seconds"] is None else f"{row['seconds']:.1f}")
    console.print(table)


def run(ns, minify_args: list[str], say) -> dict:
    out = ns.out.resolve()
    root = str(Path(__file__).resolve().parents[2])
    scripts = [s.resolve() for s in ns.scripts]
    tasks = [(str(s), name, str(out), minify_args, os.getcwd(), root) for s, name in zip(scripts, names(scripts))]
    where = f"on the cluster at {ns.cluster}" if ns.cluster else f"here, {ns.jobs} at a time"
    say(f"{len(tasks)} script(s) {where}; each into {out}/<name>/, logs in {out}/logs/")
    start = time.monotonic()
    owner, futures = (submit_cluster if ns.cluster else submit_local)(ns, tasks)
    try:
        rows = collect(futures, tasks, say, start)
    finally:
        if ns.cluster:
            owner.close()
        else:
            owner.shutdown(wait=False, cancel_futures=True)
    return {"format": "minify-batch/1", "cluster": ns.cluster, "jobs": None if ns.cluster else ns.jobs,
            "minify_args": minify_args, "seconds": round(time.monotonic() - start, 1), "scripts": rows}


def main(argv: list[str]) -> int:
    from minifier.report.terminal import error_console, wide_console

    cut = argv.index("--") if "--" in argv else len(argv)
    ns, minify_args = parser().parse_args(argv[:cut]), argv[cut + 1:]
    errors = error_console()
    problem = bad_input(ns)
    if ns.cluster and not problem:
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            problem = "--cluster needs Dask distributed: pip install 'minify[cluster]'"
    if problem:
        errors.print(f"minify batch: {problem}", highlight=False, markup=False)
        return EXIT_BAD_INPUT
    try:
        ns.out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        errors.print(f"minify batch: cannot write {ns.out}: {exc.strerror or exc}", highlight=False, markup=False)
        return EXIT_CANNOT_WRITE
    say = (lambda text: None) if ns.quiet else (lambda text: errors.print(text, highlight=False, markup=False))
    try:
        result = run(ns, minify_args, say)
    except OSError as exc:  # the scheduler cannot be reached
        errors.print(f"minify batch --cluster {ns.cluster}: cannot reach the scheduler: {exc}", highlight=False,
                     markup=False)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # the local minify runs got the SIGINT too and stop in order
        errors.print(f"minify batch: interrupted; what each run finished is in {ns.out}/<name>/", highlight=False,
                     markup=False)
        return EXIT_INTERRUPTED
    (ns.out / "batch.json").write_text(json.dumps(result, indent=1))
    console = wide_console()
    print_table(result["scripts"], console)
    ok = sum(r["exit"] == EXIT_OK for r in result["scripts"])
    console.print(f"{ok}/{len(result['scripts'])} verified repro(s) in {result['seconds']} s; "
                  f"summary in {ns.out / 'batch.json'}", highlight=False, markup=False)
    return EXIT_OK if ok == len(result["scripts"]) else EXIT_NOT_REPRODUCED
