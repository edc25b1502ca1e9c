"""A run that ends early (Ctrl-C, an error) closes its worker pool without waiting for workers
still warming up: on a busy machine that wait held a Ctrl-C past CI's 120 s limit."""
from minifier.workers.pool import WorkerPool


def test_closing_a_pool_whose_workers_still_warm_up_ends_them_unawaited(tmp_path):
    pool = WorkerPool(2, tmp_path / "logs", timeout=300.0)  # its zygote takes seconds to import torch
    pool.close()
    assert [future.result() for future in pool.warmups] == [None, None]  # no warm-up answer was awaited
    assert pool.idle.empty() and not pool.starting
    workers = [line for line in (tmp_path / "logs").iterdir() if line.name.startswith("worker-")]
    assert len(workers) <= 2  # none started in place of a killed one
