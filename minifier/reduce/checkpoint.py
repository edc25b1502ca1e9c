"""Save a reduction as it goes, so an interrupted or budget-limited run can be resumed.

The checkpoint of one failing graph lives in its case folder (`work/cases/graph_N/`): every
answer the workers gave (the evaluator's cache, keyed by candidate source + inputs + config)
and, per bug signature, the best graph so far (source and input references). `--resume`
loads the answers back, so the reduction replays its own steps from the cache without
compiling them again and continues where it stopped, reaching the same result as a run that
was never interrupted. Answers are only trusted when the recorded values are the same ones
(the script may not be deterministic), which a fingerprint of the values checks.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.fx as fx

from compiler.graph_code import module_source
from minifier.graph.edit import input_ref, placeholders

FILE = "checkpoint.json"


def fingerprint(values: dict) -> str:
    """A hash of every recorded value (names, dtypes, shapes, strides and bytes)."""
    h = hashlib.sha256()
    for name in sorted(values):
        value = values[name]
        h.update(name.encode())
        if isinstance(value, torch.Tensor):
            t = value.detach().cpu()
            h.update(f"{t.dtype}{tuple(t.shape)}{t.stride()}".encode())
            h.update(tensor_bytes(t))
        else:
            h.update(repr(value).encode())
    return h.hexdigest()


def tensor_bytes(t: torch.Tensor) -> bytes:
    """The raw bytes of a tensor's values, read without numpy (not a declared dependency)."""
    if t.is_sparse or t.layout != torch.strided:
        t = t.to_dense()
    if t.is_quantized:
        t = t.int_repr()
    if t._is_zerotensor():  # no storage (its data pointer is null): its values are zeros
        t = torch.zeros(t.shape, dtype=t.dtype)
    flat = t.detach().cpu().contiguous().reshape(-1).view(torch.uint8)
    return ctypes.string_at(flat.data_ptr(), flat.numel()) if flat.numel() else b""


@dataclass
class Checkpoint:
    folder: Path
    values_key: str

    @property
    def path(self) -> Path:
        return self.folder / FILE

    def read(self) -> dict:
        try:
            data = json.loads(self.path.read_text())
        except (OSError, ValueError):
            return {}
        return data if data.get("values") == self.values_key else {}

    def load_answers(self, cache: dict) -> int:
        """Put the saved answers into `cache` (an Evaluator's); how many were new."""
        answers = self.read().get("answers", {})
        new = {k: a for k, a in answers.items() if k not in cache}
        cache.update(new)
        return len(new)

    def best(self, signature: str) -> dict | None:
        return self.read().get("best", {}).get(signature)

    def save(self, cache: dict | None, signature: str, best: fx.GraphModule, stopped: str | None = None) -> None:
        """Record `best` for `signature` and the answers so far (`cache` None: keep the saved ones,
        e.g. after Ctrl-C, when the answers in flight may come from workers killed by it)."""
        data = self.read() or {"values": self.values_key, "best": {}, "answers": {}}
        if cache is not None:
            data["answers"] = dict(cache)  # a copy: answers nobody waits for still arrive on the pool's threads
        data["best"][signature] = {"source": module_source(best), "inputs": [input_ref(p) for p in placeholders(best)],
                                   "stopped": stopped}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, default=str))
        os.replace(tmp, self.path)
