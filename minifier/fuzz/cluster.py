"""`minify fuzz --cluster ADDRESS`: a campaign's shards as tasks on a Dask distributed cluster
(the `cluster` extra; why Dask: docs/fuzzing.md, "On a cluster").

Each task is one shard (minifier.fuzz.shard): `minify fuzz --shard I/N` in a process of its own on
a worker, with the campaign's seed and budget, into `OUT/shards/I-of-N/<attempt>/`; it returns
the shard's finding records. A worker lost mid-task: the scheduler runs the task again elsewhere
(and `retries` covers a shard process that died); the lost attempt's folder is never read, and
the client merges exactly one answer per shard, by finding id, so nothing is lost or doubled.
The shard process dies with the worker that started it (PR_SET_PDEATHSIG on Linux).
"""
from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

RETRIES = 2
DROPPED = {"--cluster": 1, "--shards": 1, "-o": 1, "--out": 1, "--seed": 1, "-q": 0, "--quiet": 0}


def _die_with_parent() -> None:
    """In the shard process: end it when the worker that started it dies (Linux)."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def shard_task(args: list[str], shard: str, folder: str, cwd: str, root: str) -> dict:
    """Run on a worker: one shard of the campaign; its summary and finding records."""
    attempt = Path(folder) / uuid.uuid4().hex[:8]
    attempt.mkdir(parents=True)  # at once: an attempt that is lost still leaves its (empty) folder
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])),
           "TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "minifier", "fuzz", *args, "--shard", shard, "-o", str(attempt),
                           "-q"], cwd=cwd, env=env, capture_output=True, text=True,
                          preexec_fn=_die_with_parent if sys.platform == "linux" else None)
    if proc.returncode not in (0, 1, 4):  # the shard itself failed: retried, then reported
        raise RuntimeError(f"shard {shard} exited {proc.returncode}: {(proc.stderr or proc.stdout)[-500:]}")
    result = json.loads((attempt / "fuzz.json").read_text())
    records = json.loads((attempt / "findings.json").read_text())["findings"]
    return {"shard": shard, "exit": proc.returncode, "folder": str(attempt), "examples": result["examples"],
            "compiles": result["compiles"], "units": result.get("units"), "seconds": round(time.monotonic() - start, 1),
            "worker": _worker_name(), "records": records}


def _worker_name() -> str:
    try:
        from dask.distributed import get_worker
        return get_worker().address
    except (ImportError, ValueError):
        return os.uname().nodename


def shard_args(argv: list[str]) -> list[str]:
    """The user's options for every shard: without --cluster, --shards, -o, --seed and -q."""
    out, skip = [], 0
    for arg in argv:
        if skip:
            skip -= 1
        elif arg.split("=")[0] in DROPPED:
            skip = 0 if "=" in arg else DROPPED[arg]
        else:
            out.append(arg)
    return out


def run(opts, ns, argv: list[str], say) -> dict:
    """Submit the shards, say each as it ends, merge their records into OUT; fuzz.json's dict."""
    from dask.distributed import Client

    from minifier.fuzz.merge import merge

    out = opts.out.resolve()
    root = str(Path(__file__).resolve().parents[2])
    client = Client(ns.cluster, timeout="30s")
    try:
        workers = len(client.scheduler_info()["workers"])
        count = ns.shards or max(1, 2 * workers)
        args = shard_args(argv) + ["--seed", str(opts.seed)]
        if (out / "findings.json").is_file():
            args += ["--known", str(out / "findings.json")]
        resources = {"GPU": 1} if opts.device.startswith("cuda") else None
        say(f"{count} shards of seed {opts.seed} on {workers} worker(s) at {ns.cluster}")
        start = time.monotonic()
        futures = [client.submit(shard_task, args, f"{i}/{count}", str(out / "shards" / f"{i}-of-{count}"),
                                 os.getcwd(), root, retries=RETRIES, pure=False, resources=resources,
                                 key=f"minify-fuzz-shard-{i}-of-{count}-{uuid.uuid4().hex[:6]}")
                   for i in range(1, count + 1)]
        answers, failed = collect(futures, count, say, start)
    finally:
        client.close()
    folders = [Path(a["folder"]) for a in sorted(answers, key=lambda a: a["shard"])]
    summary = merge(folders, out) if folders else {"findings": 0}
    return {"cluster": ns.cluster, "seed": opts.seed, "shards": count, "workers": workers,
            "seconds": round(time.monotonic() - start, 1), "examples": sum(a["examples"] for a in answers),
            "compiles": sum(a["compiles"] for a in answers), "failed_shards": failed,
            "answers": [{k: v for k, v in a.items() if k != "records"} for a in answers],
            "findings": summary["findings"], "new": sorted({i for a in answers for i, r in a["records"].items()
                                                             if r["status"] == "new"})}


def collect(futures: list, count: int, say, start: float, beat: float = 30.0) -> tuple[list[dict], list[str]]:
    """Each shard's answer as it comes (said at once), and a line every `beat` seconds meanwhile."""
    from dask.distributed import wait

    answers, failed, pending = [], [], set(futures)
    while pending:
        try:
            done, pending = wait(pending, timeout=beat, return_when="FIRST_COMPLETED")
        except TimeoutError:  # nothing ended within the beat
            say(f"{time.monotonic() - start:7.1f}s {len(answers)}/{count} shards done, {len(pending)} running or "
                f"waiting")
            continue
        for future in done:
            try:
                answer = future.result()
            except Exception as exc:  # retried RETRIES times (and rerun for each lost worker)
                failed.append(" ".join(str(exc).split())[:300])
                say(f"a shard failed: {failed[-1]}")
                continue
            answers.append(answer)
            say(f"{time.monotonic() - start:7.1f}s shard {answer['shard']} done on {answer['worker']} in "
                f"{answer['seconds']} s: {answer['examples']} examples, {len(answer['records'])} finding(s); "
                f"{len(answers)}/{count} shards done")
    return answers, failed


def main(argv: list[str], command, console, errors) -> int:
    """`command`: (parser, options, validate) of minifier.fuzz.command, the campaign's own."""
    from minifier.exit_codes import EXIT_BAD_INPUT, EXIT_FOUND, EXIT_NOT_REPRODUCED, EXIT_OK

    parser, options, validate = command
    ns = parser().parse_args(argv)
    if ns.seed is None:
        ns.seed = random.randrange(2**32)  # one seed for every shard, or they would not split one campaign
    opts = options(ns)
    try:
        import dask.distributed  # noqa: F401
    except ImportError:
        errors.print("minify fuzz --cluster: needs Dask distributed: pip install 'minify[cluster]'", markup=False)
        return EXIT_BAD_INPUT
    problem = validate(opts, ns)
    if problem:
        errors.print(f"minify fuzz: {problem}", highlight=False, markup=False)
        return EXIT_BAD_INPUT
    opts.out.mkdir(parents=True, exist_ok=True)
    say = (lambda text: None) if ns.quiet else (lambda text: errors.print(text, highlight=False, markup=False))
    try:
        result = run(opts, ns, argv, say)
    except OSError as exc:  # the scheduler cannot be reached
        errors.print(f"minify fuzz --cluster {ns.cluster}: {exc}", highlight=False, markup=False)
        return EXIT_BAD_INPUT
    (opts.out / "fuzz.json").write_text(json.dumps(result, indent=1))
    console.print(f"cluster campaign: {result['shards']} shards, {result['examples']} examples in "
                  f"{result['seconds']} s; {result['findings']} finding(s), {len(result['new'])} new; "
                  f"{opts.out / 'findings.json'}", highlight=False, markup=False)
    if result["failed_shards"] or any(a["exit"] == 4 for a in result["answers"]):
        return EXIT_NOT_REPRODUCED
    return EXIT_FOUND if result["findings"] else EXIT_OK
