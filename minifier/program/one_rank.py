"""A distributed job's program run as its one rank, for the whole-program reduction.

The reduction runs each candidate, and the repro, as one process: a job's program started that
way finds none of the variables torchrun sets and cannot meet its peers. The prologue sets them
for a world of one rank (rank 0, a free port on this host), so a failure that needs no peer (a
DTensor program's compile failing on every rank, whatever their number) is reduced and verified
on one process; one that needs its peers does not reproduce, and the run says so (exit 4).
"""
from __future__ import annotations

import ast

PROLOGUE = '''\
import os as _minify_os
import socket as _minify_socket
# minify: the job's program as its one rank (world size 1), meeting itself on a free local port
with _minify_socket.socket() as _minify_port:
    _minify_port.bind(("127.0.0.1", 0))
    _minify_os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", LOCAL_WORLD_SIZE="1", GROUP_RANK="0",
                              MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_minify_port.getsockname()[1]))
'''


def as_one_rank(tree: ast.Module) -> None:
    """Put the prologue first in `tree` (after a `from __future__` import, which must lead)."""
    at = 0
    while at < len(tree.body) and isinstance(tree.body[at], ast.ImportFrom) and tree.body[at].module == "__future__":
        at += 1
    tree.body[at:at] = ast.parse(PROLOGUE).body
