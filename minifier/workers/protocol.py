"""What a worker and its parent exchange: messages on the one wire (compiler/boot/wire.py: pickles
behind a length; `Closed` when a worker's stream ends), and the values jobs refer to.

Jobs name inputs by reference to the recorded eager values of a case (`resolve_inputs`), so
a job stays small; each worker loads a case's values once (`CaseValues`).
"""
from __future__ import annotations

from compiler.boot.wire import Closed, read_message, write_message

__all__ = ["CaseValues", "Closed", "read_message", "resolve_inputs", "write_message"]


class CaseValues:
    """The recorded eager values of each case, loaded once per worker."""

    def __init__(self):
        self.cache: dict[str, dict] = {}

    def get(self, case_dir: str) -> dict:
        if case_dir not in self.cache:
            from repro.value_store import load_case_values

            self.cache[case_dir] = load_case_values(case_dir)
        return self.cache[case_dir]


def resolve_inputs(values: dict, refs: list) -> list:
    """Candidate inputs from references to recorded values, with optional simplifications."""
    from minifier.graph.input_transforms import apply_transform

    out = []
    for ref in refs:
        name, transform = (ref, None) if isinstance(ref, str) else ref
        out.append(apply_transform(values[name], transform))
    return out
