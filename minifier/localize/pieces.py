"""A large graph's failure looked for in pieces, before any replay of the whole graph.

Every question about the whole of a large graph (confirmation, divergence, the check for a
second bug) is a whole Inductor compile, and Inductor's compile time grows faster than the
graph: at 961 ops one check costs about as much as the script's own run. The script's run
(the capture) has already shown that the graph fails; what is left is where. So the ops are
cut, in graph order, into pieces of about PIECE_OPS ops, each fed with the recorded eager
values of what it reads and returning every value read after it. The pieces are checked
side by side on the workers, each a small compile, so the cost grows with the graph. A piece
that fails alone holds a bug of its own: its inputs are eager's, so nothing before it is to
blame. Each such piece is confirmed, localized and reduced as a graph of its own.

When no piece fails alone (a bug that needs the graph's fusion across a cut, or an error
that grows past tolerance only further on) the caller replays the whole graph as before: the
pieces cost a little time, never the answer.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch.fx as fx

from compiler.kernels import Kernel
from compiler.signature import rung_of

from minifier.graph.edit import NON_OPS, op_names, op_nodes, rebuild
from minifier.graph.nodes import exposed_nodes, stored_nodes
from minifier.workers.answer import Answer
from minifier.workers.ask import Asker, repeats_question
from minifier.workers.evaluate import Evaluator
from repro.value_store import memory_budget, nbytes

PIECE_OPS = 40  # small enough that a piece compiles in about a second
MIN_OPS = 2 * PIECE_OPS  # below this the whole graph is one piece: the usual path
KINDS = ("accuracy", "compile_error", "runtime_error")  # crashes and hangs would take a worker each
# Bytes of stored values a piece returns at most. Each is judged on every piece's check, at
# about 25 MB/s on a core (compiler.ladder: a dozen fp64 passes), to save the one failing
# piece a compile in its divergence search (about a second): past this they cost more than
# they save, and every worker holds them about five times at once (eager, fp64, compiled).
STORED_BYTES = 32 << 20


@dataclass
class Piece:
    gm: fx.GraphModule
    first: int  # index of its first op among the whole graph's ops (from 0)
    last: int
    of: int  # ops in the whole graph
    signature: str = ""  # its failure's, once checked
    outputs: list[str] | None = None  # what the rest of the graph reads of it (gm may return stored values too)

    def describe(self) -> str:
        return f"ops {self.first + 1}-{self.last + 1} of {self.of}"


def split(gm: fx.GraphModule, values: dict, size: int = PIECE_OPS, workers: int = 1,
          kernels: list | None = None) -> list[Piece] | None:
    """The graph's ops in graph order, cut into pieces of about `size`, as many as a multiple
    of `workers` (no worker idles in the last round); None when it is too small to cut, or a
    cut would need a value that was not recorded (a tuple, an opaque object) or a piece would
    pull in ops of another (an op with side effects). With the script's kernel map of `gm`
    (`kernels`), each piece also returns the values Inductor stores anyway: its check then
    judges them too, which answers a divergence search's first question without a compile,
    unless they pass STORED_BYTES or the memory budget's share of a worker (repro.value_store):
    the divergence search then judges them a budget's worth at a time."""
    ops = op_nodes(gm)
    if len(ops) < max(MIN_OPS, 2 * size):
        return None
    count = max(2, workers * max(1, round(len(ops) / (size * workers))))
    bounds = [round(i * len(ops) / count) for i in range(count + 1)]
    pieces, cap = [], min(STORED_BYTES, memory_budget() // max(1, workers))  # pieces are checked side by side
    for first, end in zip(bounds, bounds[1:]):
        members = set(ops[first:end])
        members |= {u for n in ops[first:end] for u in n.users if u.target in NON_OPS}  # getitems go with their op
        piece = _piece(gm, members, values, kernels, cap)
        if piece is None:
            return None
        pieces.append(Piece(piece[0], first, end - 1, len(ops), outputs=piece[1]))
    return pieces


def _piece(gm: fx.GraphModule, members: set[fx.Node], values: dict,
           kernels: list | None, cap: int) -> tuple[fx.GraphModule, list[str]] | None:
    reads = {a for n in members for a in n.all_input_nodes if a not in members and a.op != "placeholder"}
    leaves = [n.name for n in gm.graph.nodes if n in members and any(u not in members for u in n.users)]
    outputs = [name for name in leaves if name in values and hasattr(values[name], "shape")]
    if not outputs:
        return None
    try:
        piece = rebuild(gm, cut={n.name for n in reads}, outputs=outputs, values=values)
    except ValueError:  # a value it reads was not recorded
        return None
    names = {n.name for n in members}
    if not set(op_names(piece)) <= names:
        return None
    stored = [n for n in _stored(piece, values, kernels) if n not in outputs] if kernels else []
    if sum(nbytes(values.get(n)) for n in stored) > cap:  # judged a chunk at a time later
        stored = []
    return (rebuild(piece, outputs=outputs + stored) if stored else piece), outputs


def _stored(piece: fx.GraphModule, values: dict, kernels: list) -> list[str]:
    """The piece's values that the script's kernels store anyway (minifier.graph.nodes.stored_nodes)."""
    node_kernels: dict[str, set] = {}
    found = [Kernel(**k) for k in kernels]
    for kernel in found:
        for name in kernel.nodes:
            node_kernels.setdefault(name, set()).add(kernel.name)
    in_place = {k.name for k in found if k.in_place}
    return stored_nodes(piece, exposed_nodes(piece, values), node_kernels, in_place)


def failing_pieces(gm: fx.GraphModule, values: dict, ev: Asker, failure: dict, tries: int,
                   kernels: list | None = None) -> list[Piece] | None:
    """The pieces that fail alone at Inductor as the whole graph failed in the script (same
    kind; for an error the same signature), in graph order; None when the graph is not cut.
    Each is run `tries` times at once, so that the confirmation of a failing one is answered."""
    pieces = split(gm, values, workers=ev.pool.size, kernels=kernels) if failure.get("kind") in KINDS else None
    if not pieces:
        return None
    # A piece whose first run passes is not the failure: its other runs would only judge again
    ev.prefetch([repeats_question(p.gm, tries, kernel_map=True, until_pass=True) for p in pieces])
    failing = []
    for piece in pieces:
        answer = Answer.from_wire(ev.repeats(piece.gm, tries, until_pass=True)[0])
        if answer.failed and answer.kind == failure["kind"] and \
                (failure["kind"] == "accuracy" or answer.signature == failure.get("signature")):
            piece.signature = answer.signature
            failing.append(piece)
    return failing


INTERNAL_RUNGS = ("signed_zero", "layout")  # what a value's user may not see: its zero's sign, its strides


def for_pieces(ev: Evaluator, signature: str) -> Evaluator:
    """The evaluator that judges pieces: a piece returns values the rest of the graph reads,
    whose strides and zero signs no user sees (GPT-2's cat of an empty KV cache returns other
    strides than eager's, which the next matmul does not mind), so those rungs are not judged,
    unless the script's failure is one of them. A graph output the script's run saw wrong
    there is searched on its own afterwards (minifier.search.unjudged_outputs)."""
    skip = tuple(r for r in INTERNAL_RUNGS if r != rung_of(signature) and r not in ev.judging.ignore)
    return replace(ev, judging=ev.judging.ignoring(*skip)) if skip else ev
