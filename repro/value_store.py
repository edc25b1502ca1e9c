"""A case's recorded values on disk: one file while they are small, shards beyond a memory
budget, read back memory-mapped.

Why: every value a captured graph computes is recorded once (the reduction feeds candidates
from them) and every worker reads them. Held in memory, a model whose activations fill half the
machine is held several times over (the minify process, each worker). On disk, memory-mapped,
the kernel's page cache holds one copy that all processes share and that it can drop under
pressure. A recorder (minifier.capture.values) moves what it has recorded to a shard
whenever that passes the budget, so the minify process never holds more than about one budget
of values either. Values in different shards do not share storage once read back: a view
recorded after its base was spilled is saved with its own copy of the base's storage.
"""
from __future__ import annotations

import os
from pathlib import Path

import torch

from compiler.tensor_kinds import restored, savable

MAIN = "values.pt"  # what is left after the last shard (all of it when nothing was spilled)
SHARD = "values.{}.pt"
BUDGET_ENV = "MINIFY_MEMORY_BUDGET_MB"
MIN_BUDGET = 64 << 20


def memory_budget() -> int:
    """Bytes of recorded values one process may hold, or one observation may expose, at a time:
    a sixteenth of the memory available now (a divergence check holds the exposed values about
    four times: eager, compiled, and their fp64 reference), at least 64 MiB; MINIFY_MEMORY_BUDGET_MB
    sets it."""
    if os.environ.get(BUDGET_ENV, "").strip():
        return int(float(os.environ[BUDGET_ENV]) * (1 << 20))
    return max(MIN_BUDGET, _available() // 16)


def _available() -> int:
    try:
        with open("/proc/meminfo") as f:
            info = dict(line.split(":", 1) for line in f)
        return int(info["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return 8 << 30


def nbytes(value) -> int:
    if isinstance(value, torch.Tensor) and not value._is_zerotensor():
        return value.untyped_storage().nbytes() if value.layout == torch.strided else value.numel() * value.element_size()
    return 0


def save_atomically(value, path: Path) -> None:
    """torch.save through a new file renamed into place: a process that has the old file
    memory-mapped keeps reading the old file, never a truncated one."""
    tmp = path.with_name(path.name + ".tmp")
    torch.save(savable(value), tmp)
    os.replace(tmp, path)


def spill(values: dict, folder: Path, index: int) -> dict:
    """Save `values` as shard `index` of `folder`; the same values read back memory-mapped."""
    path = folder / SHARD.format(index)
    save_atomically(values, path)
    return _load(path)


def load_case_values(folder: Path | str) -> dict:
    """Every recorded value of a case folder, its shards and values.pt, memory-mapped."""
    folder = Path(folder)
    values: dict = {}
    for index in range(1, 1 + len(list(folder.glob(SHARD.format("*"))))):
        path = folder / SHARD.format(index)
        if path.exists():
            values.update(_load(path))
    values.update(_load(folder / MAIN))
    return values


def _load(path: Path):
    try:
        return restored(torch.load(path, weights_only=True, mmap=True))
    except RuntimeError:  # a file torch.save wrote in its legacy format (no mmap)
        return restored(torch.load(path, weights_only=True))
