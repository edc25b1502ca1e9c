"""The one delta core over a predicate: ddmin is 1-minimal, a window of N tries finds what one
at a time finds, and the graph passes, the graph-subset search and the program reducer all
ask it the same questions."""
import random
from concurrent.futures import ThreadPoolExecutor

from minifier.reduce import delta
from minifier.reduce.delta_core import ddmin, first_in_order, one_at_a_time, side_by_side
from minifier.workers.judge import PASSES, REPRODUCES


def _needs_any(*needed: set):
    """A predicate that holds while some needed set is kept whole; and the subsets it was asked."""
    asked = []

    def holds(subset):
        asked.append(list(subset))
        return any(n <= set(subset) for n in needed)

    return holds, asked


def _one_minimal(found, holds) -> bool:
    return holds(found) and all(not holds([x for x in found if x != drop]) for drop in found)


def test_ddmin_on_a_plain_predicate_finds_the_known_one_minimal_set():
    holds, asked = _needs_any({3, 17, 29})
    assert ddmin(list(range(40)), one_at_a_time(holds)) == [3, 17, 29]
    assert [] not in asked  # the empty set is asked only on request
    holds, asked = _needs_any(set())
    assert ddmin(list(range(10)), one_at_a_time(holds), empty_first=True) == []
    assert asked == [[]]


def test_ddmin_of_two_alternatives_is_one_minimal():
    holds, _ = _needs_any({"0", "1"}, {"3"})
    found = ddmin(["0", "1", "2", "3"], one_at_a_time(holds))
    assert _one_minimal(found, holds)


def _random_predicate(rng: random.Random, items: list):
    """Needed sets plus noise: a few subsets that hold with no needed set in them, so the search
    is not monotone and the order of its questions decides what it finds."""
    needed = [set(rng.sample(items, rng.randint(1, min(3, len(items))))) for _ in range(rng.randint(1, 3))]
    lucky = {frozenset(rng.sample(items, rng.randint(1, len(items) // 2))) for _ in range(4)}
    return lambda subset: any(n <= set(subset) for n in needed) or frozenset(subset) in lucky


def test_a_window_finds_what_one_at_a_time_finds():
    rng = random.Random(46)
    with ThreadPoolExecutor(4) as pool:
        for _ in range(200):
            items = list(range(rng.randint(2, 24)))
            holds = _random_predicate(rng, items)
            alone = ddmin(items, one_at_a_time(holds), 1, empty_first=True)
            for window in (2, 3, 5, 64):
                assert ddmin(items, one_at_a_time(holds), window, empty_first=True) == alone
                assert ddmin(items, side_by_side(holds, pool), window, empty_first=True) == alone


def test_first_in_order_draws_only_the_windows_it_needs():
    drawn = []

    def candidates():
        for i in range(100):
            drawn.append(i)
            yield i

    found = first_in_order(candidates(), one_at_a_time(lambda i: i in (7, 9)), 4)
    assert (found.index, found.candidate, found.tried) == (7, 7, 8)
    assert drawn == list(range(8))
    assert first_in_order(iter(range(10)), one_at_a_time(lambda i: False), 3).tried == 10


class _Predicate:
    """The Evaluator's two calls the graph passes use, answered by a predicate (no compiler)."""

    def __init__(self, holds):
        self.holds = holds

    def test_many(self, candidates):
        return [REPRODUCES if self.holds(c) else PASSES for c in candidates]

    def first_reproducing(self, candidates):
        return next((i for i, v in enumerate(self.test_many(candidates)) if v == REPRODUCES), None)


def test_graph_passes_and_the_subset_search_ask_the_same_questions():
    """The graph passes' ddmin (the Evaluator's windows, a build that can refuse a subset) and the
    plain predicate's ddmin are one search: the same subsets asked in the same order."""
    rng = random.Random(3)
    for _ in range(50):
        items = list(range(rng.randint(2, 16)))
        holds = _random_predicate(rng, items)
        graph_asked, plain_asked = [], []
        build = lambda kept: graph_asked.append(list(kept)) or (None if kept == [1] else kept)
        refusing = lambda kept: kept != [1] and holds(kept)
        graph = delta.ddmin(_Predicate(holds), items, build, 1)
        plain = ddmin(items, one_at_a_time(lambda kept: plain_asked.append(list(kept)) or refusing(kept)),
                      empty_first=True)
        assert graph == plain and graph_asked == plain_asked
