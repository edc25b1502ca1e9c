"""Where each node of a recorded graph came from in the user's script.

graph.py is plain source and keeps no node metadata, so the capture saves, beside it, each
computing node in graph order with the last frame of its Dynamo `stack_trace` (file, line,
code). Reports map a node of the replayed graph back to that line by position. Nodes of a
backward graph carry no stack trace; AOTAutograd gives them the `seq_nr` of the forward op
they differentiate, which leads to that op's Dynamo node and so to its line.
"""
from __future__ import annotations

import re

import torch.fx as fx

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<function>[^\n]+)\n(?P<code>[^\n]*)')


def last_frame(stack_trace: str | None) -> dict | None:
    """{file, line, function, code} of the innermost frame of a node's stack trace."""
    frames = list(_FRAME.finditer(stack_trace or ""))
    if not frames:
        return None
    m = frames[-1]
    return {"file": m["file"], "line": int(m["line"]), "function": m["function"].strip(), "code": m["code"].strip()}


def module_path(stack: dict | None) -> str | None:
    """`layers.0 (Linear)`: the innermost module a node was traced in (nn.Module code has no
    user stack trace, so this is what says where a node of, e.g., an nn.Sequential came from)."""
    if not stack:
        return None
    path, cls = list(stack.values())[-1]
    path = re.sub(r"^L\['\w+'\]", "", str(path))
    path = re.sub(r"\._modules\['([^']*)'\]|\['([^']*)'\]", lambda m: "." + (m.group(1) or m.group(2)), path)
    path = re.sub(r"\.+", ".", path).strip(".")
    name = getattr(cls, "__name__", None) or str(cls).rsplit(".", 1)[-1].strip("'>")
    return f"{path or 'self'} ({name})"


def op_name(node: fx.Node) -> str:
    target = node.target
    if isinstance(target, str):
        return target
    packet = getattr(target, "overloadpacket", None)
    return (getattr(packet, "__name__", None) or getattr(target, "__name__", None) or str(target)).split(".")[-1]


def node_origins(gm: fx.GraphModule, by_seq_nr: dict[int, dict] | None = None) -> list[dict]:
    """Each node that is not an input or the output, in graph order, with its source line.
    `by_seq_nr`: for a backward graph, the forward node row of each autograd sequence number."""
    rows = []
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output"):
            continue
        row = {"name": node.name, "op": op_name(node), "origin": last_frame(node.meta.get("stack_trace")),
               "module": module_path(node.meta.get("nn_module_stack") or node.meta.get("fwd_nn_module_stack"))}
        forward = (by_seq_nr or {}).get(node.meta.get("seq_nr"))
        if forward is not None:
            row.update(origin=row["origin"] or forward["origin"], module=row["module"] or forward.get("module"),
                       gradient_of=forward["name"])
        rows.append(row)
    return rows


def seq_nr_sources(aten_gm: fx.GraphModule) -> dict[int, str]:
    """Autograd sequence number -> name of the Dynamo node a forward AOT graph's op came from."""
    sources = {}
    for node in aten_gm.graph.nodes:
        seq, origin = node.meta.get("seq_nr"), node.meta.get("from_node")
        if seq is not None and origin and seq not in sources:
            sources[seq] = origin[0].name
    return sources
