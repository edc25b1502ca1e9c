"""An accuracy bug's reduction sends its likely first candidates ahead (the divergent node
alone, and that with every size at 1), so that their kernels build side by side. A guess is
only worth sending if the reduction later asks exactly that question: same graph, same key.
No compiler needed: the pool here says every candidate reproduces, as a one-op bug does."""
from pathlib import Path

import torch
import torch.fx as fx

from compiler.stages import CompileSetup, CompileSpec
from minifier.capture.values import record_values
from minifier.graph.edit import op_names
from compiler.stages import CompileSpec
from minifier.capture.values import record_values
from minifier.graph.edit import op_names
from minifier.reduce.passes import Context
from minifier.reduce.passes.cut_at_divergence import likely_first
from minifier.reduce.reducer import reduce_graph, with_candidate_check
from minifier.workers.evaluate import Evaluator
from minifier.workers.job import Job
from test_evaluator_questions import FAILS, AnsweringPool


def _case():
    gm = fx.symbolic_trace(lambda x, y: torch.relu(x * y) + 1)
    values = record_values(gm, [torch.randn(8, 16), torch.randn(8, 16)])
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm, values


def _reduce(folder: Path, guess_ahead: bool) -> tuple[list[str], list[str], fx.GraphModule]:
    gm, values = _case()
    ev = Evaluator(AnsweringPool(FAILS), folder, CompileSetup(CompileSpec(), []), signature="accuracy@inductor")
    ev = with_candidate_check(ev, gm, values)
    ctx = Context(values=values, kind="accuracy", window=1)
    ctx.notes["first_divergent"] = "relu"
    guessed = []
    if guess_ahead:
        guesses = likely_first(gm, ctx)
        guessed = [ev.job(g).key() for g in guesses]
        ev.prefetch([(g, None, 0) for g in guesses])
    small = reduce_graph(gm, ev, ctx)
    return [Job.from_dict(j).key() for j in ev.pool.sent], guessed, small


def test_the_guesses_sent_ahead_are_the_reductions_own_first_questions(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    plain, _, small = _reduce(tmp_path / "a", guess_ahead=False)
    ahead, guessed, same = _reduce(tmp_path / "b", guess_ahead=True)
    assert op_names(small) == op_names(same) == ["relu"]
    assert len(guessed) == 2 and ahead[:2] == guessed
    assert sorted(ahead) == sorted(plain), "a guess the reduction never asked, or a question asked twice"
