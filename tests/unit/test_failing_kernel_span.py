"""The cut after a device assert's kernel: wherever the nodes the assert named lie (the culprit
among them, before them or after them), the search ends at the cut the unguided search finds,
and where they hold the culprit it asks far fewer prefixes (each a compile of most of the graph;
a failing one a fresh process alone on the GPU)."""
import random
from types import SimpleNamespace

from minifier.reduce.delta_core import shortest_failing_prefix
from minifier.reduce.passes import Context
from minifier.reduce.passes.cut_after_culprit import SPLITS, failing_kernel_span

OPS = [SimpleNamespace(name=f"op{i}") for i in range(300)]


def _search(culprit: int, named: list[int]) -> tuple[int, list[int], list[int]]:
    """The cut, every prefix asked and the failing ones, for a graph that fails from op `culprit` on."""
    asked, failing = [], []

    def first_failing(points):
        for i, p in enumerate(points):
            asked.append(p)
            if p >= culprit:
                failing.append(p)
                return i
        return None

    ctx = Context(values={}, kind="runtime_error", notes={"kernel_nodes": [f"op{i}" for i in named]})
    lo, hi = failing_kernel_span(OPS, ctx, first_failing)
    return shortest_failing_prefix(lo, hi, first_failing, SPLITS), asked, failing


def test_the_guided_cut_is_the_unguided_one_wherever_the_named_nodes_lie():
    rng = random.Random(45)
    for _ in range(500):
        culprit = rng.randrange(len(OPS))
        named = sorted(rng.sample(range(len(OPS)), rng.randint(1, 4)))
        assert _search(culprit, named)[0] == _search(culprit, [])[0] == culprit


def test_a_named_kernel_holding_the_culprit_spares_most_prefixes():
    _, asked, failing = _search(250, [])
    _, guided_asked, guided_failing = _search(250, [249, 250, 251])
    assert len(asked) >= 8 and len(failing) >= 4, (asked, failing)
    assert len(guided_asked) <= 4 and len(guided_failing) <= 2, (guided_asked, guided_failing)
    assert _search(0, [0, 1])[0] == 0 and _search(299, [298, 299])[0] == 299  # kernels at either end
