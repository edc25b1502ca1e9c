"""One supply of warm interpreters (minifier/workers/interpreters.py) for the pool's workers and
for repro.py's verification: on a CPU build both are children of one zygote; where no zygote
forks warm (a CUDA build, taken here without a GPU) both are fresh interpreters counted under
one cap of CUDA processes, so a needed worker takes the place of the idle repro runner."""
from pathlib import Path

import pytest

from compiler.gpu_slots import CudaSlots
from minifier.workers.interpreters import WarmInterpreters
from minifier.workers.pool import Worker, WorkerPool
from minifier.workers.zygote import supported
from repro.verify import run_repro

REPRO = "import os, sys\nprint(f'REPRODUCED: parent {os.getppid()}')\nsys.exit(1)\n"


@pytest.mark.slow
@pytest.mark.skipif(not supported(), reason="the zygote runs on CPU builds of torch only")
def test_the_verifier_and_the_workers_are_children_of_one_zygote(tmp_path):
    pool = WorkerPool(2, tmp_path / "logs", timeout=300.0)
    try:
        assert all(future.result() for future in pool.warmups)  # both workers warm
        supply = pool.interpreters
        repro = tmp_path / "repro.py"
        repro.write_text(REPRO)
        verification = run_repro(repro, timeout=120, prewarmed=supply.take(another=True))
        workers = list(pool.idle.queue)
        assert verification.reproduced and verification.line == f"REPRODUCED: parent {supply.zygote.pid}"
        assert [worker.proc.zygote for worker in workers] == [supply.zygote, supply.zygote]
        assert supply.started == {"worker": 2, "repro": 1} and supply.ready is None  # nothing started aside
    finally:
        pool.close()


@pytest.mark.slow
def test_without_a_warm_zygote_workers_and_the_repro_runner_share_one_cap(tmp_path):
    slots = CudaSlots(cap=2, wait=0.5)
    slots.enable()
    supply = WarmInterpreters(None, slots=slots)
    workers = [Worker(tmp_path / "worker-0.log", supply)]
    try:
        supply.keep_ready()  # kept only to be ready: it takes the cap's last place
        runner = supply.ready
        assert runner is not None and len(slots._live()) == 2
        supply.keep_ready()  # one is ready: no second
        workers.append(Worker(tmp_path / "worker-1.log", supply))  # needed: the idle runner gives way
        assert runner.proc.poll() is not None and len(slots._live()) == 2 and slots.peak == 2
        assert supply.take() is runner and runner.run(Path(tmp_path / "repro.py"), [], 60) is None
        assert supply.started == {"worker": 2, "repro": 1}
    finally:
        for worker in workers:
            worker.end(now=True)
        supply.close()
