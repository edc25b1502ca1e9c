"""Which Inductor config values a script changed, so workers and repro.py can replay them.

Compared against a snapshot taken before the script runs (not against declared defaults,
which some environments override at import), and limited to values that survive JSON.
"""
from __future__ import annotations

import json

import torch._inductor.config as inductor_config

# Changed by minify itself to keep patched codegen visible; not the user's doing.
IGNORED = {"fx_graph_cache", "fx_graph_remote_cache", "compile_threads"}  # compiler.settings


def snapshot() -> dict:
    return dict(inductor_config.get_config_copy())


def changed_since(before: dict) -> tuple[dict, list[str]]:
    """(replayable changes, names of changes that cannot be replayed, e.g. callables)."""
    now = inductor_config.get_config_copy()
    changed, unreplayable = {}, []
    for key, value in now.items():
        if key in IGNORED or key not in before or before[key] == value:
            continue
        try:
            json.dumps(value)
        except TypeError:
            unreplayable.append(key)
            continue
        changed[key] = value
    return changed, unreplayable


def config_lines(config: dict) -> list[str]:
    """`torch._inductor.config.x = value` lines, as repro.py sets them."""
    return [f"torch._inductor.config.{k} = {v!r}" for k, v in sorted(config.items())]
