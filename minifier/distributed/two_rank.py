"""A repro on the ranks themselves, for a bug of the collective (docs/distributed.md).

Where the failing graph, rewritten without its collectives (compiler/collectives.py), passes on
one process, the collective itself is the bug (the capture's `collective_bug`). The graph is then
cut to that collective and its wait, fed on each rank the input the collective had there, and
repro.py starts itself as many times (forked ranks over gloo; where the job's tensors were on
CUDA, spawned ranks over NCCL, one GPU each), meeting on a FileStore in a temporary folder (no
port to choose, nothing to collide with; every wait bounded), runs the cut graph compiled and
eagerly on each rank and exits 1 (REPRODUCED) where a rank's values differ, 0 where none does.
It is verified in fresh processes: it must exit 1, and 0 with the compiler off.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch

from compiler.collective_record import COLLECTIVE_VALUES
from compiler.inject import Injection, injection_source

RUN_LIMIT = 300  # seconds the repro may take; it ends its ranks itself before that

_BODY = '''

def graph(x, group_name):
    collective = torch.ops._c10d_functional.{op}(x, {args}group_name)
    return torch.ops._c10d_functional.wait_tensor(collective)


def one_rank(rank, world, store, results, compiler_off):
    if BACKEND == "nccl":
        torch.cuda.set_device(rank)
    dist.init_process_group(BACKEND, init_method=f"file://{{store}}", rank=rank, world_size=world,
                            timeout=timedelta(seconds=60))
    x = torch.load(HERE / f"inputs_rank{{rank}}.pt", map_location=f"cuda:{{rank}}" if BACKEND == "nccl" else "cpu")
    group = dist.group.WORLD.group_name
    expected = graph(x.clone(), group)
    actual = torch.compile(graph, backend="eager" if compiler_off else "inductor")(x.clone(), group)
    err = (expected - actual).abs().max().item()
    ok = torch.allclose(expected, actual, rtol=1e-4, atol=1e-5)
    Path(results, f"rank{{rank}}.tmp").write_text("ok" if ok else f"max_abs_err={{err:.4g}}")
    os.replace(Path(results, f"rank{{rank}}.tmp"), Path(results, f"rank{{rank}}"))
    dist.destroy_process_group()  # the parent does not wait for it: a rank may hang here


def main():
    compiler_off = "--compiler-off" in sys.argv  # the same run with nothing compiled: must pass
    if BACKEND == "nccl" and torch.cuda.device_count() < WORLD:  # no verdict: a rank could not even start
        print(f"CANNOT RUN: {{WORLD}} ranks over NCCL need {{WORLD}} GPUs; {{torch.cuda.device_count()}} visible")
        return 2
    with tempfile.TemporaryDirectory() as tmp:  # NCCL ranks are spawned: a CUDA process must not fork
        ctx = mp.start_processes(one_rank, args=(WORLD, Path(tmp, "store"), tmp, compiler_off), nprocs=WORLD,
                                 join=False, start_method="spawn" if BACKEND == "nccl" else "fork")
        deadline = time.monotonic() + LIMIT
        try:
            while not ctx.join(timeout=2):
                if all(Path(tmp, f"rank{{r}}").exists() for r in range(WORLD)):
                    break  # every rank has answered
                if time.monotonic() > deadline:
                    print(f"the ranks did not finish within {{LIMIT}} s")
                    return 2
        except Exception as exc:  # a rank raised: its error is the answer
            print(f"a rank raised: {{str(exc).strip().splitlines()[-1]}}")
            return 1
        finally:
            for p in ctx.processes:
                if p.is_alive():
                    p.kill()
        wrong = {{r: Path(tmp, f"rank{{r}}").read_text() for r in range(WORLD)}}
        wrong = {{r: v for r, v in wrong.items() if v != "ok"}}
    if wrong:
        print(f"REPRODUCED: {op} compiled differs from eager on rank(s) {{sorted(wrong)}}: {{wrong}}")
        return 1
    print("fixed: every rank agrees with eager")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def collective_bug(graphs) -> object | None:
    """The chosen rank's first failing graph whose collective itself is the bug, if any."""
    return next((g for g in graphs if g.failure and g.record.get("collective_bug")), None)


def write_repro(out: Path, g, rank: int, nproc: int, script: str, graph_count: int) -> dict:
    """repro.py and each rank's input beside it; the row report.json takes."""
    row = g.record["collectives"][0]
    base = g.folder.parent.parent
    saved_on: list[str] = []  # where each stored tensor was (read on the CPU: minify's own process stays off CUDA)
    for r in range(nproc):
        values = torch.load(base / f"rank_{r}" / g.folder.name / COLLECTIVE_VALUES, weights_only=False,
                            map_location=lambda storage, location: saved_on.append(location) or storage)
        torch.save(values[row["wait"]]["input"], out / f"inputs_rank{r}.pt")
    backend = "nccl" if any(w.startswith("cuda") for w in saved_on) else "gloo"  # the job's tensors were on CUDA
    args = "".join(f"{a!r}, " for a in row["args"][1:-1])
    injections = [Injection.from_dict(d) for d in g.record.get("injections", [])]
    what = "gives wrong values" if (g.failure or {}).get("kind") == "accuracy" else "fails"
    header = [f"# torch.compile (inductor) {what} in {row['op']} (the collective itself; minify, from "
              f"{script} rank {rank} of {nproc}, graph {g.index} of {graph_count}).",
              f"# Runs on {nproc} processes ({backend}{', one GPU each' if backend == 'nccl' else ''}). "
              f"torch {torch.__version__}. Exit 1 while the bug is there, 0 once it is fixed; "
              "`--compiler-off`: the same run with nothing compiled.",
              "import os, sys, tempfile, time", "from datetime import timedelta", "from pathlib import Path", "",
              "import torch", "import torch._inductor.config", "import torch.distributed as dist",
              "import torch.multiprocessing as mp", "", "torch._inductor.config.compile_threads = 1",
              injection_source(injections), "", "HERE = Path(__file__).resolve().parent",
              f"WORLD = {nproc}", f"LIMIT = {RUN_LIMIT - 20}", f"BACKEND = {backend!r}"]
    repro = out / "repro.py"
    repro.write_text("\n".join(header) + _BODY.format(op=row["op"], args=args))
    return {"repro": str(repro), "ops_after": 2, "ops_before": g.nodes, "ops": [row["op"], "wait_tensor"],
            "repro_ranks": nproc, "failing_graph": g.index, "failure": g.failure, "stage": "inductor",
            "reproduced": 1, "tries": 1, "part": g.part, "inputs": f"inputs_rank0.pt .. inputs_rank{nproc - 1}.pt",
            "backend": backend,
            "replay": f"on {nproc} ranks ({backend}): without its collectives the graph passes on one process"}


def verify(repro: Path) -> tuple[bool, str]:
    """Exit 1 compiled and 0 with the compiler off, each in a fresh process (the two side by side);
    the line that says so."""
    start = time.monotonic()
    runs = [subprocess.Popen([sys.executable, str(repro), *extra], cwd=repro.parent, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, start_new_session=True)
            for extra in ([], ["--compiler-off"])]
    codes, lines = [], []
    for run in runs:
        try:
            out, _ = run.communicate(timeout=max(1.0, RUN_LIMIT - (time.monotonic() - start)))
            codes.append(run.returncode)
            lines.append((out.strip().splitlines() or [""])[-1] + f" ({time.monotonic() - start:.1f} s)")
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)  # the repro and the ranks it spawned
            run.communicate()
            codes.append(None)
            lines.append(f"did not finish within {RUN_LIMIT} s")
    return codes == [1, 0], "; ".join(f"{w}: exit {c}, {line}" for w, c, line in
                                      zip(("compiled", "compiler off"), codes, lines))


def report_row(out: Path, g, rank: int, nproc: int, script: str, graph_count: int) -> dict:
    row = write_repro(out, g, rank, nproc, script, graph_count)
    row["verified"], row["verify_line"] = verify(Path(row["repro"]))
    (out / "two_rank.json").write_text(json.dumps(row, indent=1, default=str))
    return row
