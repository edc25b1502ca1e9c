"""What a worker and its parent exchange: length-prefixed pickles, and the values jobs refer to.

Jobs name inputs by reference to the recorded eager values of a case (`resolve_inputs`), so
a job stays small; each worker loads a case's values once (`CaseValues`).
"""
from __future__ import annotations

import pickle
import struct


def read_message(stream):
    header = stream.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack("<I", header)
    return pickle.loads(stream.read(size))


def write_message(stream, message) -> None:
    data = pickle.dumps(message)
    stream.write(struct.pack("<I", len(data)) + data)
    stream.flush()


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
