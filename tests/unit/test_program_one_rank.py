"""A distributed job's whole program, reduced as one process (minifier/program/one_rank.py):
the prologue that makes it a world of one rank, and a rank-prefixed traceback still read."""
import ast

from compiler.signature import last_exception, program_signature
from minifier.program.instrument import RANK_PREFIX
from minifier.program.one_rank import as_one_rank

JOB = '''from __future__ import annotations
"""doc"""
import torch.distributed as dist
dist.init_process_group("gloo")
'''

# what a rank's stderr holds once torch.distributed has set its excepthook
RANK_TRACEBACK = '''[rank0]: Traceback (most recent call last):
[rank0]:   File "/tmp/x.py", line 3, in <module>
[rank0]:     raise RuntimeError("as_strided not supported with DTensor")
[rank0]: RuntimeError: as_strided not supported with DTensor
'''


def test_the_prologue_sets_torchruns_variables_before_the_program_and_after_future_imports():
    tree = ast.parse(JOB)
    as_one_rank(tree)
    assert isinstance(tree.body[0], ast.ImportFrom) and tree.body[0].module == "__future__"
    text = ast.unparse(tree)
    assert text.index("WORLD_SIZE='1'") < text.index("init_process_group")
    for name in ("RANK", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"):
        assert f"{name}=" in text


def test_a_rank_prefixed_traceback_gives_the_programs_exception():
    assert last_exception(RANK_TRACEBACK) is None  # the prefix hides it
    raised = last_exception(RANK_PREFIX.sub("", RANK_TRACEBACK))
    assert program_signature(*raised) == program_signature("RuntimeError", "as_strided not supported with DTensor")
