"""A crash's, error's or assert's reduction, once at one op, sends the input passes' likely
questions ahead (minifier/search/lookahead.py): shrink every size, then drop the unit dims,
then zero the values, each on the graph the one before would keep. A guess is only worth
sending if the reduction later asks exactly that question (same graph, same key), and sending
it must change neither what the reduction asks nor what it keeps. No compiler needed: the pool
here says every candidate fails as the bug does, as a one-op bug's candidates do."""
from pathlib import Path

import torch
import torch.fx as fx

from compiler.stages import CompileSetup, CompileSpec
from minifier.capture.values import record_values
from minifier.search.bugs import ask_input_passes_ahead
from minifier.graph.edit import op_names, placeholders
from compiler.stages import CompileSpec
from minifier.capture.values import record_values
from minifier.graph.edit import op_names, placeholders
from minifier.reduce.passes import Context
from minifier.reduce.reducer import reduce_graph, with_candidate_check
from minifier.search.bugs import ask_input_passes_ahead
from minifier.workers.evaluate import Evaluator
from minifier.workers.job import Job
from test_evaluator_questions import AnsweringPool

ASSERTS = {"status": "fail", "kind": "runtime_error", "seconds": 0.5,
           "signature": "runtime_error@inductor|AcceleratorError|error: device-side assert triggered"}


def _case():
    gm = fx.symbolic_trace(lambda x: torch.tanh(x))
    values = record_values(gm, [torch.randn(16, 64)])
    for p in gm.graph.find_nodes(op="placeholder"):
        p.meta["value"] = p.name
    return gm, values


def _reduce(folder: Path, ahead: bool) -> tuple[list[str], list[str], fx.GraphModule]:
    gm, values = _case()
    ev = Evaluator(AnsweringPool(ASSERTS), folder, CompileSetup(CompileSpec(), []), signature=ASSERTS["signature"])
    ev = with_candidate_check(ev, gm, values)
    ctx = Context(values=values, kind="runtime_error", window=1)
    sent = []  # jobs sent once the hook before shrink_shapes' first run returned
    before = ask_input_passes_ahead(ev, ctx) if ahead else (lambda name, g: None)

    def watch(name: str, g: fx.GraphModule) -> None:
        before(name, g)
        if name == "shrink_shapes" and not sent:
            sent.append(len(ev.pool.sent))
    small = reduce_graph(gm, ev, ctx, before=watch)
    keys = [Job.from_dict(j).key() for j in ev.pool.sent]
    return keys, keys[:sent[0]], small


def test_the_input_passes_questions_sent_ahead_are_the_ones_the_reduction_asks(tmp_path):
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    plain, _, small = _reduce(tmp_path / "a", ahead=False)
    ahead, guessed, same = _reduce(tmp_path / "b", ahead=True)
    assert op_names(small) == op_names(same) == ["tanh"]
    assert [p.meta.get("transform") for p in placeholders(small)] == \
        [p.meta.get("transform") for p in placeholders(same)] == [(("shape", (1, 1)), ("view", ()), ("zeros",))]
    assert len(plain) == 3 and len(guessed) == 3, (plain, guessed)  # shrink, drop the dims, zero: all sent at once
    assert guessed == plain and ahead == plain, "a guess the reduction never asked, or a question asked twice"
