"""Shape and dtype comments for the graph code in repro.py: run the graph once, describe each value.

A reader should see what flows through the graph without running it; the values come from
one eager run on copies of the real inputs (nothing is compiled here).
"""
from __future__ import annotations

import torch
import torch.fx as fx

from compiler.oracle import clone_inputs
from repro.inputs import describe


def describe_run(gm: fx.GraphModule, inputs: list) -> tuple[dict[str, str], list[torch.dtype]]:
    """(node name -> `float32[2, 3]` for every placeholder and computed value, dtypes of the
    tensors returned); empty if eager fails on the inputs."""
    found: dict[str, str] = {}
    returned: list[torch.dtype] = []

    class Describer(fx.Interpreter):
        def run_node(self, node):
            result = super().run_node(node)
            if node.op != "output":
                found[node.name] = describe(result)
            else:
                leaves = result if isinstance(result, (tuple, list)) else [result]
                returned.extend(x.dtype for x in leaves if isinstance(x, torch.Tensor))
            return result

    try:
        with torch.no_grad():
            Describer(gm).run(*clone_inputs(inputs))
    except Exception:
        return {}, []
    return found, returned


def annotate_forward(forward: str, descriptions: dict[str, str], width: int = 110) -> str:
    """`forward` source with `# dtype[shape]` after each assignment and the inputs' after `def`."""
    lines = []
    for line in forward.splitlines():
        stripped = line.strip()
        name = stripped.split(" = ", 1)[0] if " = " in stripped else None
        note = descriptions.get(name) if name else None
        if stripped.startswith("def forward("):
            args = [a.strip() for a in stripped[len("def forward("):stripped.rindex(")")].split(",")[1:]]
            note = ", ".join(f"{a}: {descriptions[a]}" for a in args if a in descriptions)
            if len(line) + len(note) + 4 > width:
                lines.append(line)
                lines += [f"{line[:len(line) - len(line.lstrip())]}    # {a}: {descriptions[a]}" for a in args
                          if a in descriptions]
                continue
        lines.append(f"{line}  # {note}" if note else line)
    return "\n".join(lines)
