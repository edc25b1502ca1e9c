"""Every distinct bug in one failing graph, each confirmed and reduced on its own.

A graph can hold more than one bug (two miscompiled ops, or a compile error hiding an
accuracy bug). After a bug is reduced, its ops are masked: replaced by inputs fed with their
recorded eager values. If the masked graph still fails, that failure is another bug, reduced
in turn from the masked graph, so no reduction can slip from one bug to the other. With an
accuracy bug's first divergent node, every other node of the same op is masked too: a
failure there with the same signature would be the same bug (a bug is its signature and its
culprit's op), and a model repeats its layers (four relus, four rounds of "same bug").
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import torch.fx as fx

from compiler.stages import STAGES
from minifier.graph.edit import op_label, op_names, rebuild
from minifier.graph.nodes import observed, output_names, own_metrics, stored_outputs
from minifier.localize.cudagraphs_rung import cudagraphs_rung
from minifier.localize.divergence import exposed_nodes, find_divergence
from minifier.localize.pieces import Piece, failing_pieces, for_pieces
from minifier.workers.ask import (Question, divergence_question, kernels_question, repeats_question, stuck_after,
                                  tries_questions)
from minifier.workers.answer import Answer
from minifier.workers.evaluate import Evaluator
from minifier.workers.worker import cuda_context_poisoned
from minifier.phases import Phases
from minifier.reduce.budget import Budget
from minifier.reduce.passes import Context
from minifier.reduce.passes.cut_at_divergence import likely_first
from minifier.reduce.reducer import reduce_graph, with_candidate_check
from minifier.search.kernel_nodes import failing_kernel_nodes
from minifier.search.lookahead import INPUT_PASSES, likely_questions
from minifier.search.masking import ask_masked_at_one_op, ask_masked_early, known_ops, masked_after, same_op
from repro.value_store import memory_budget

MAX_BUGS_PER_GRAPH = 4


@dataclass
class Bug:
    graph: int
    kind: str
    signature: str
    stage: str
    message: str
    reproduced: int  # of `tries` replays of the unreduced graph
    tries: int
    ops_before: int = 0
    small: fx.GraphModule | None = None
    culprit: str | None = None  # accuracy: the node where values first diverge
    culprit_metrics: dict | None = None
    divergent_roots: list[str] = field(default_factory=list)
    also_in: list[int] = field(default_factory=list)  # other graphs with the same bug
    notes: dict = field(default_factory=dict)

    @property
    def flaky(self) -> bool:
        return 0 < self.reproduced < self.tries

    def key(self, culprit_label: str | None) -> tuple:
        return (self.signature, culprit_label)


def first_failing_stage(ev: Evaluator, gm: fx.GraphModule, kind: str) -> tuple[str, dict]:
    """The earliest stage whose failure has the same kind as the Inductor one (checked side by side)."""
    stages = [s for s in STAGES if s != "inductor"]
    for stage, answer in zip(stages, ev.outcomes_at(gm, stages)):
        if (typed := Answer.from_wire(answer)).failed and typed.kind == kind:
            return stage, answer
    return "inductor", {}


def speculative_checks(gm: fx.GraphModule, tries: int, signature: str, values: dict,
                       known_kernels: list | None = None, known_metrics: dict | None = None) -> list[Question]:
    """What confirming a bug leads to, asked at once so that no worker waits on another: an accuracy
    failure's divergence search (the longest, so first), the `tries` runs, a crash's or hang's kernel
    map (its kernel's nodes: made beside the tries, not after them), then each stage before Inductor."""
    checks = []
    if signature.startswith("accuracy") and exposed_nodes(gm, values):
        checks.append(divergence_question(gm, known_kernels, known_metrics))
    ends = ends_its_process(signature)  # each further try in a process of its own: all asked at once,
    checks.append(repeats_question(gm, tries, share_compile=ends))  # loading the first's compile
    if ends:
        checks += tries_questions(gm, 1, tries, {"share_compile": True})
    if signature.startswith(("crash@inductor", "hang@inductor")):
        checks.append(kernels_question(gm))
    return checks + [Question(gm, stage) for stage in STAGES if stage != "inductor"]


def ends_its_process(signature: str) -> bool:
    """A crash, a hang or a device-side assert: the try's worker is gone (or its CUDA context),
    so the next try runs in another, as a job of its own (Evaluator.repeats)."""
    return signature.startswith(("crash@", "hang@")) or cuda_context_poisoned({"status": "fail", "signature": signature})


@dataclass
class BugSearch:
    """What the bug search of every failing graph shares: how many replays confirm a bug, where
    progress goes, the reduction budget, the bugs found so far (by key, so that a bug repeated
    in a later graph is reduced once) and who hears of each reduced bug at once (its repro is
    verified while the search for the next bug goes on)."""

    tries: int
    say: Callable[[str], None] = lambda text: None
    budget: Budget | None = None
    resume: bool = False
    known: dict = field(default_factory=dict)
    on_reduced: Callable[[Bug, Evaluator], None] = lambda bug, ev: None
    phases: Phases = field(default_factory=Phases)  # where the time goes (report's timing table)


def bugs_in_graph(index: int, gm: fx.GraphModule, values: dict, ev: Evaluator, first_signature: str,
                  search: BugSearch, kernels: list | None = None,
                  outputs: list[str] | None = None, masked_first: dict | None = None) -> tuple[list[Bug], Evaluator]:
    """Confirm, localize and reduce each distinct bug of graph `index`, masking each one found
    before looking for the next. Each question gets its evaluator from the one before (`for_bug`:
    what was learned of the graph, the run time limit and the candidate check, carries on); the
    last is returned with the bugs, for localization. `kernels`: the kernel map of `gm` the
    script's compile recorded (compiler.capture), for the first divergence search. `outputs`:
    the outputs that matter once a bug is masked (a piece's, without the stored values it also
    returns for its first check: kept, they would change the masked graph's kernels).
    `masked_first` (known_ops): nodes masked from the start, each the op of a bug found before;
    if the graph then passes, that bug is all it holds, known without confirming it again."""
    bugs, masked = [], set(masked_first or ())
    kernels_later: list = []  # the graphs whose kernels localization asks: sent behind the masked graph's check
    for _ in range(MAX_BUGS_PER_GRAPH):
        current = rebuild(gm, cut=masked, values=values, outputs=outputs) if masked else gm
        if not op_names(current):
            _known_again(masked_first if not bugs else None, index, search)
            break
        ev = ev.for_bug("inductor", first_signature)
        if not masked and known_failure(first_signature, index, search):
            break
        if masked:
            ev.prefetch([Question(current)])
            ev.kernels_ahead(kernels_later)
            answer = Answer.from_wire(ev.outcomes([current])[0])
            if not answer.failed:
                _known_again(masked_first if not bugs else None, index, search)
                break
            ev = ev.for_bug("inductor", answer.signature)
            if known_failure(answer.signature, index, search):
                break
        with search.phases.timed("confirmation"):
            bug, ev = confirm(index, current, values, ev, search.tries, None if masked else kernels)
        bug.notes["masked"] = len(masked)  # found with other bugs' ops masked (cut_note)
        if bug.reproduced < bug.tries:
            ev.abandon()
            bugs.append(bug)  # not reproducible outside the script, or flaky: reported, not reduced
            break
        with search.phases.timed("stage checks"):
            ev = locate(bug, current, values, ev, search.say)
        label = op_label(next(n for n in current.graph.nodes if n.name == bug.culprit)) if bug.culprit else None
        same_label = {bug.culprit} | same_op(current, label, values) if bug.culprit else set()
        if bug.key(label) in search.known:
            same_bug_again(search.known[bug.key(label)], index, search.say)
            if not bug.culprit:
                break
            masked |= same_label
            continue
        early = (lambda: ask_masked_early(gm, masked | same_label, values, ev, outputs)) if same_label else None
        one_op = None if same_label else ask_masked_at_one_op(gm, masked, values, ev, outputs, first=not bugs)
        with search.phases.timed("reduction"):
            ev = reduce_bug(bug, current, values, ev, search, early, one_op)
        search.known[bug.key(label)] = bug
        bugs.append(bug)
        search.on_reduced(bug, ev)
        kernels_later = [bug.small] + [gm] * (len(bugs) == 1)
        masked |= masked_after(gm, bug.small, values, same_label)
    return bugs, ev


def cut_note(bug: Bug) -> str | None:
    """How the graph `bug` was found in differs from the script's own, if it does: other ops
    masked (fed their eager values), a piece cut from the graph. A finding that reproduces only
    there and not alone is likely an artifact of the cut (report rows say so)."""
    where = []
    if bug.notes.get("masked"):
        where.append(f"with {bug.notes['masked']} ops of other bugs masked (fed their eager values)")
    if bug.notes.get("piece"):
        where.append(f"in a piece cut from graph {bug.graph} ({bug.notes['piece']})")
    return " and ".join(where) or None


def _known_again(masked_first: dict | None, index: int, search: BugSearch) -> None:
    """Graph `index` passed with the ops of known bugs masked from the start: those bugs are its failure."""
    for same in {id(b): b for b in (masked_first or {}).values()}.values():
        same_bug_again(same, index, search.say)


def known_failure(signature: str, index: int, search: BugSearch) -> bool:
    """A crash, error or assert with a known signature is that bug again (with no culprit node, its
    key is the signature): confirming it would end there, after its replays and stage checks (on a
    GPU each replay of an assert is a fresh process, one at a time)."""
    again = None if signature.startswith("accuracy@") else search.known.get((signature, None))
    if again is not None:
        same_bug_again(again, index, search.say)
    return again is not None


def same_bug_again(same: Bug, index: int, say: Callable[[str], None]) -> None:
    """A failure of graph `index` with the key of a bug found before (for a bug with no culprit
    node, its signature alone: a device-side assert in each of a model's blocks is one bug)."""
    if index != same.graph and index not in same.also_in:  # each piece of a graph may say so
        same.also_in.append(index)
    say(f"graph {index}: same bug as graph {same.graph}")


def bugs_in_pieces(index: int, gm: fx.GraphModule, values: dict, ev: Evaluator, failure: dict,
                   search: BugSearch, kernels: list | None = None) -> tuple[list[Bug], Evaluator, Piece | None]:
    """The bugs of a large graph, each found in a piece that fails alone (minifier.localize.pieces)
    and confirmed, localized and reduced there; ([], ev, None) when no piece fails alone or
    none of their bugs could be reduced: then the whole graph is searched as usual. Returns the
    evaluator of the last question and the piece of the first bug."""
    ev = for_pieces(ev, failure["signature"])
    start = time.perf_counter()
    pieces = failing_pieces(gm, values, ev, failure, search.tries, kernels)
    if pieces is None:  # too small to cut
        return [], ev, None
    search.phases.add("pieces", time.perf_counter() - start)
    bugs, first = [], None  # first: the Piece where the first bug was found
    for piece in pieces:
        search.say(f"graph {index}: {piece.describe()} fail alone, fed with eager values")
        found, last = bugs_in_graph(index, piece.gm, values, ev, piece.signature, search, outputs=piece.outputs,
                                    masked_first=known_ops(piece.gm, values, search.known, piece.signature))
        for bug in found:
            bug.ops_before = piece.of
            bug.notes["replay"] = (f"found in pieces: {piece.describe()} fail alone fed with eager values; the whole "
                                   f"graph was not replayed (its failure is the script's own run)")
            bug.notes["piece"] = piece.describe()
        bugs += found
        first = first or (piece if found else None)
        ev = last
        if len(bugs) >= MAX_BUGS_PER_GRAPH:
            break
    if not any(b.small is not None for b in bugs):
        return [], ev, None
    return bugs, ev, first


def ask_input_passes_ahead(ev: Evaluator, ctx: Context) -> Callable[[str, fx.GraphModule], None]:
    """For a bug with no culprit node: when the input passes first start on a graph of one op,
    what they will likely ask is asked at once (minifier.search.lookahead)."""
    asked = False

    def before(name: str, g: fx.GraphModule) -> None:
        nonlocal asked
        if not asked and name == INPUT_PASSES[0] and len(op_names(g)) == 1:
            asked = True
            ev.prefetch([Question(q) for q in likely_questions(g, ctx, ev.validate)])
    return before


def confirm(index: int, gm: fx.GraphModule, values: dict, ev: Evaluator, tries: int,
            kernels: list | None = None) -> tuple[Bug, Evaluator]:
    """Replay the graph `tries` times (k of k); what it leads to is asked for at once. Returns
    the bug and the evaluator to ask about it from now on: once every replay reproduced (and
    none hung), a run longer than `stuck_after` the slowest replay is a hang. The divergence
    search takes the kernel map a piece's check or the script's compile (`kernels`) recorded."""
    question = repeats_question(gm, tries)  # answered, or on its way (asked during the capture): taken
    checked = ev.outcomes_of([question])[0] if ev.asked(question) else {}
    known = Answer.from_wire(checked).kernels or kernels
    answers = repeats_reading_stored(gm, values, ev, tries, known) if known and not checked else None
    if answers is None:
        ev.prefetch(speculative_checks(gm, tries, ev.signature, values, known, observed(checked, output_names(gm))))
        answers = ev.repeats(gm, tries)
    typed = [Answer.from_wire(a) for a in answers]
    hits = sum(1 for a in typed if ev.verdict(a) == "reproduces")
    kind, message = next(((a.kind, a.message or "") for a in typed if a.signature == ev.signature), ("", ""))
    nodes = failing_kernel_nodes(typed, ev, gm) if hits == tries and ends_its_process(ev.signature) else []
    bug = Bug(index, kind, ev.signature, "inductor", message, hits, tries, len(op_names(gm)),
              notes={"kernel_nodes": nodes})  # the reduction cuts after them first
    if hits == tries and kind != "hang":
        limit = stuck_after(max(a.seconds or 0.0 for a in typed))
        ev = ev.for_bug(ev.stage, ev.signature, ev.culprit, timeout=limit)
    return bug, ev


def repeats_reading_stored(gm: fx.GraphModule, values: dict, ev: Evaluator, tries: int,
                           kernels: list) -> list[dict] | None:
    """An accuracy failure's `tries` runs, judged on `gm`'s own outputs, from a graph that also
    returns the values Inductor stores anyway (with the kernel map the script's compile
    recorded: the same kernels): the divergence search reads their metrics instead of compiling
    the graph once more, and is asked as soon as the runs are in. None when there is nothing to
    add, or unless every run reproduces: then `gm` itself is asked, as the script compiled it."""
    extra = stored_outputs(gm, values, kernels, memory_budget()) if ev.signature.startswith("accuracy") else []
    if not extra:
        return None
    own = output_names(gm)
    wide = rebuild(gm, outputs=own + extra)
    ev.prefetch([repeats_question(wide, tries, judged=len(own))] + [Question(gm, s) for s in STAGES if s != "inductor"])
    answers = ev.repeats(wide, tries, judged=len(own))
    if sum(1 for a in answers if ev.verdict(a) == "reproduces") < tries:
        return None
    ev.prefetch([divergence_question(gm, kernels, observed(answers[0], own + extra))])
    ev.answer_as(repeats_question(gm, tries), own_outputs(ev.cached(repeats_question(wide, tries, judged=len(own))),
                                                          len(own)))
    return answers


def own_outputs(answer: dict, count: int) -> dict:
    """`answer` (and each of its runs) with the metrics of the first `count` outputs alone."""
    def own(a: dict) -> dict:
        return {**a, "metrics": own_metrics(a.get("metrics", []), count)}

    return {**own(answer), **({"runs": [own(r) for r in answer["runs"]]} if "runs" in answer else {})}


def locate(bug: Bug, gm: fx.GraphModule, values: dict, ev: Evaluator, say: Callable[[str], None]) -> Evaluator:
    """The first failing stage and, for an accuracy bug, the node where values first diverge;
    returns the evaluator that asks about that stage and keeps that node from now on."""
    say(f"graph {bug.graph}: {bug.kind} reproduces {bug.reproduced}/{bug.tries}; finding the first failing stage")
    stage, stage_answer = first_failing_stage(ev, gm, bug.kind)
    if stage != "inductor":
        ev = ev.for_bug(stage, Answer.from_wire(stage_answer).signature)
    bug.notes.update(cudagraphs_rung(ev, gm, values))  # nothing where no CUDA graph ran, or short of Inductor
    bug.stage, bug.signature = ev.stage, ev.signature
    if bug.kind == "accuracy":
        divergence = find_divergence(gm, ev, values)
        if divergence and divergence.roots:
            bug.culprit, bug.divergent_roots = divergence.roots[0], divergence.roots
            bug.culprit_metrics = divergence.metrics.get(bug.culprit)
            ev = ev.for_bug(ev.stage, ev.signature, bug.culprit)
    return ev


def reduce_bug(bug: Bug, gm: fx.GraphModule, values: dict, ev: Evaluator, search: BugSearch,
               meanwhile: Callable[[], None] | None = None,
               at_one_op: Callable[[fx.GraphModule], None] | None = None) -> Evaluator:
    """Reduce the confirmed bug's graph into `bug.small`; returns the evaluator it reduced with
    (candidates checked on fake tensors first where they can model the graph). Its likely first
    candidates are sent to the workers before `meanwhile` (work it may go on beside) is;
    `at_one_op` hears of the first graph kept with a single op."""
    say = search.say
    say(f"graph {bug.graph}: reducing {bug.ops_before} ops ({bug.kind} at {ev.stage}"
        f"{', first divergent node ' + bug.culprit if bug.culprit else ''})")
    ev = with_candidate_check(ev, gm, values)
    ctx = Context(values=values, kind=bug.kind, window=ev.pool.size, notes=bug.notes)  # what passes learn is kept
    if bug.culprit:
        ctx.notes["first_divergent"] = bug.culprit
        ev.prefetch([Question(candidate) for candidate in likely_first(gm, ctx)])
    if meanwhile is not None:
        meanwhile()
    def progress(name: str, g: fx.GraphModule) -> None:
        nonlocal at_one_op
        say(f"  {name}: {len(op_names(g))} ops left")
        if at_one_op is not None and len(op_names(g)) == 1:
            at_one_op, tell = None, at_one_op
            tell(g)

    before = ask_input_passes_ahead(ev, ctx) if at_one_op is not None else (lambda name, g: None)
    bug.small = reduce_graph(gm, ev, ctx, progress=progress, budget=search.budget, resume=search.resume,
                             before=before)
    return ev
