"""One whole-graph compile shared by the tries of a failure that ends its process.

A crash, a hang or a device-side assert ends the process (or its CUDA context) that ran it, so
each of a bug's k-of-k tries runs in a fresh process (minifier.search.bugs.ends_its_process),
and each compiled the whole graph again: on a 89-op ResNet-18 graph, a fresh compile took 21 s
on two cores, one loaded from Inductor's FX graph cache 6 s. The tries run the same graph on the
same inputs with the same settings and planted bugs, so that cache, kept in a folder of that one
question's own (never the user's cache, never shared by another graph or other planted bugs:
the cache keys on the graph, not on patched codegen, compiler.settings), lets the first try's
compile serve the others: they run the code it generated, in processes that never saw the
failure. What is not tried k times: a compile that could generate other code each time
(autotuning's choice) is made once; the cold `python repro.py` of verification compiles anew.
"""
from __future__ import annotations

import contextlib
from typing import Iterator


@contextlib.contextmanager
def stored_in(folder: str | None) -> Iterator[None]:
    """Meanwhile, graphs Inductor compiles whole are stored in `folder` and loaded from it.
    None changes nothing, nor does a torch whose FX graph cache this cannot point there."""
    import torch

    try:
        from torch._inductor.codecache import FxGraphCache
    except ImportError:
        FxGraphCache = None
    original = vars(FxGraphCache).get("_get_tmp_dir") if FxGraphCache is not None else None
    if folder is None or not isinstance(original, staticmethod):
        yield
        return
    FxGraphCache._get_tmp_dir = staticmethod(lambda: folder)
    try:
        with torch._inductor.config.patch(fx_graph_cache=True):
            yield
    finally:
        FxGraphCache._get_tmp_dir = original


def loads() -> int:
    """Whole-graph compiles this process has loaded from a store so far."""
    from torch._dynamo.utils import counters

    return counters["inductor"]["fxgraph_cache_hit"]
