"""The inputs of a repro: small ones written inline as exact literals, the rest in a file beside it.

The file goes through torch.save and is read back with `weights_only=True`, which only
rebuilds tensors and plain Python values, never arbitrary objects. Inputs are grouped by the
storage they share: a group is written inline (one literal per storage, each input an
`as_strided` view of it) or saved to the file in one `torch.save` call; either way inputs that
shared storage share it in the repro, and dtype, shape, strides, storage offset and
requires_grad survive exactly.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import torch

from compiler.tensor_kinds import is_zero_tensor, restored, savable, zero_source
from repro.literals import (constant_element, constant_source, inlinable, readable_values, scalar_literal, storage_flat,
                            tensor_source, values_source)

ALLOWED = (torch.Tensor, int, float, bool, type(None))
RESERVED = {"torch", "device", "saved", "INPUTS", "Path", "float"}


def save_inputs(values: list, path: Path) -> None:
    for v in values:
        if not isinstance(v, ALLOWED):
            raise TypeError(f"cannot save an input of type {type(v).__name__}")
    torch.save(savable(list(values)), path)


def save_values(values, path: Path) -> None:
    """torch.save of recorded values (lists, dicts of tensors), each ZeroTensor as its marker."""
    torch.save(savable(values), path)


def load_values(path: Path):
    """What save_values (or save_inputs) saved, read with weights_only=True, ZeroTensors rebuilt."""
    return restored(torch.load(path, weights_only=True))


def load_inputs(path: Path) -> list:
    """What save_inputs (or the capture) saved; a ZeroTensor's marker rebuilt (compiler.tensor_kinds)."""
    return load_values(path)


@dataclass
class InputsPlan:
    """`def make_inputs(device)` source, and the values it loads from the file (if any)."""

    source: str
    saved: list = field(default_factory=list)  # to torch.save as one list beside repro.py


def local_names(names: list[str]) -> list[str]:
    """Placeholder names as make_inputs locals, renamed where they would shadow its own."""
    out, seen = [], set()
    for name in names:
        local = name if name.isidentifier() and not name.startswith("_s") else f"x_{len(out)}"
        while local in RESERVED or local in seen:
            local += "_"
        seen.add(local)
        out.append(local)
    return out


def _storage_key(t: torch.Tensor, i: int):
    storage = t.untyped_storage()
    if storage.nbytes() == 0:
        return ("empty", i)  # empty storages all report data_ptr 0: never grouped
    return (str(t.device), storage.data_ptr())


def _grad(t: torch.Tensor) -> str:
    return ".requires_grad_()" if t.requires_grad else ""


def _simple(t: torch.Tensor, group: list[int]) -> bool:
    """One input owning its whole storage, laid out contiguously: a plain torch.tensor(...)."""
    n = t.untyped_storage().nbytes() // t.element_size()
    return len(group) == 1 and t.is_contiguous() and t.storage_offset() == 0 and t.numel() == n and t.numel() > 0


def plan_inputs(values: list, names: list[str], inputs_file: str, device: str = "cpu") -> InputsPlan:
    """Source of `make_inputs(device)` rebuilding `values` exactly, named after the placeholders."""
    for v in values:
        if not isinstance(v, ALLOWED):
            raise TypeError(f"cannot write an input of type {type(v).__name__}")
    names = local_names(names)
    groups: dict = {}
    for i, v in enumerate(values):
        if isinstance(v, torch.Tensor) and not is_zero_tensor(v):
            groups.setdefault(_storage_key(v, i), []).append(i)
    constant = {i: constant_element(values[i]) for group in groups.values() for i in group
                if not inlinable(values[i])}  # large, but one value throughout: torch.zeros/full inline
    inline = {i for group in groups.values() for i in group
              if all((inlinable(values[j]) or constant.get(j)) and values[j].dtype == values[group[0]].dtype
                     for j in group)}
    lines: list[str] = []
    saved: list = []
    done: set[int] = set()
    for i, v in enumerate(values):
        name = names[i]
        if not isinstance(v, torch.Tensor) or is_zero_tensor(v):  # a ZeroTensor has no storage: rebuilt
            lines.append(f"{name} = {zero_source(v) if is_zero_tensor(v) else scalar_literal(v)}")
            continue
        if i in done:
            continue
        group = groups[_storage_key(v, i)]
        if i not in inline:
            for j in group:
                lines.append(f"{names[j]} = saved[{len(saved)}]  # {describe_tensor(values[j])}")
                saved.append(values[j].detach().requires_grad_(values[j].requires_grad))
                done.add(j)
            continue
        if constant.get(i):
            lines += _constant_lines(values, names, group, constant[i], i)
            done.update(group)
            continue
        if _simple(v, group):
            literal, built_as = values_source(v, nested=True)
            note = f"  # bits of {readable_values(v, nested=True)}" if built_as != v.dtype else ""
            lines.append(f"{name} = {tensor_source(literal, built_as, v.dtype)}{_grad(v)}{note}")
            done.add(i)
            continue
        flat = storage_flat(v)
        literal, built_as = values_source(flat, nested=False)
        base = tensor_source(literal, built_as, v.dtype)
        notes = [f"storage shared by {', '.join(names[j] for j in group)}"] if len(group) > 1 else []
        if built_as != v.dtype:
            notes.append(f"bits of {readable_values(flat, nested=False)}")
        if len(group) > 1:
            lines.append(f"_s{i} = {base}  # {'; '.join(notes)}")
            base, notes = f"_s{i}", []
        for j in group:
            t = values[j]
            lines.append(f"{names[j]} = {base}.as_strided({tuple(t.shape)}, {tuple(t.stride())}, "
                         f"{t.storage_offset()}){_grad(t)}" + (f"  # {'; '.join(notes)}" if notes else ""))
            done.add(j)
    return _make_inputs_source(lines, saved, names, len(values), inputs_file, device)


def _constant_lines(values: list, names: list[str], group: list[int], element: str, i: int) -> list[str]:
    """The inputs of one storage that holds a single value throughout, built inline."""
    v = values[i]
    if _simple(v, group):
        return [f"{names[i]} = {constant_source(tuple(v.shape), element, v.dtype)}{_grad(v)}  # {describe_tensor(v)}"]
    n = v.untyped_storage().nbytes() // v.element_size()
    base, lines = constant_source((n,), element, v.dtype), []
    if len(group) > 1:
        lines.append(f"_s{i} = {base}  # storage shared by {', '.join(names[j] for j in group)}")
        base = f"_s{i}"
    for j in group:
        t = values[j]
        lines.append(f"{names[j]} = {base}.as_strided({tuple(t.shape)}, {tuple(t.stride())}, "
                     f"{t.storage_offset()}){_grad(t)}  # {describe_tensor(t)}")
    return lines


# A missing, empty or damaged inputs file is no verdict on the bug: repro.py says it cannot run
# and ends with 2, never with 1 ("reproduced"), which a traceback would give.
LOAD_SAVED = """def load_saved(device):
    \"\"\"The saved inputs ({inputs_file}); CANNOT RUN (exit 2) when they cannot be read.\"\"\"
    try:
        return torch.load(INPUTS, map_location=device, weights_only=True)
    except Exception as error:
        first = (str(error).strip().splitlines() or [''])[0][:200]
        print(f"CANNOT RUN: cannot load {{INPUTS}}: {{type(error).__name__}}: {{first}}")
        raise SystemExit(2)


"""


def _make_inputs_source(lines: list[str], saved: list, names: list[str], count: int, inputs_file: str,
                        device: str) -> InputsPlan:
    """`def make_inputs(device)` around the statements that build the `count` inputs: the whole
    file loaded and returned when every input is saved, in order; a single literal returned as
    it is built; else the statements and a list of the names."""
    head = [f"def make_inputs(device={device!r}):"]
    loader = LOAD_SAVED.format(inputs_file=inputs_file) if saved else ""
    if saved:
        head.append(f"    saved = load_saved(device)  # {inputs_file}")
    if saved and len(saved) == count and all(line.startswith(f"{names[i]} = saved[{i}]  # ")
                                              for i, line in enumerate(lines)):  # all of them, in order
        shown = ", ".join(f"{names[i]} {line.split('  # ', 1)[1]}" for i, line in enumerate(lines))
        return InputsPlan(loader + "\n".join([head[0], f"    # {inputs_file}: {shown}",
                                               "    return load_saved(device)"]) + "\n", saved)
    one = len(lines) == 1 and not saved and lines[0].startswith(f"{names[0]} = ")
    if one and len(lines[0]) + 14 <= 110:  # a single literal: returned as it is built
        expression, _, note = lines[0][len(names[0]) + 3:].partition("  # ")
        return InputsPlan("\n".join(head + [f"    return [{expression}]  # {names[0]}" + (f"; {note}" if note else "")])
                          + "\n", saved)
    body = head + ["    " + line for line in lines] + [f"    return [{', '.join(names)}]"]
    return InputsPlan(loader + "\n".join(body) + "\n", saved)


def describe_tensor(t: torch.Tensor) -> str:
    """`float32[2, 3]`, plus stride/offset/grad where they are not the plain ones."""
    text = f"{str(t.dtype).replace('torch.', '')}{list(t.shape)}"
    if not t.is_contiguous():
        text += f" stride={tuple(t.stride())}"
    if t.storage_offset():
        text += f" offset={t.storage_offset()}"
    if t.requires_grad:
        text += " requires_grad"
    return text


def describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return describe_tensor(value)
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(describe(v) for v in value) + ")"
    return type(value).__name__
