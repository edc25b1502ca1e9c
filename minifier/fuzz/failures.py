"""What a fuzzing failure is, and when two are the same.

Two failures are the same when their signatures match, the ops to blame do and both or
neither are a wrong gradient: accuracy signatures carry no op, so the op is taken from the
first wrong output (every step's output is returned); for an exception, and for a gradient
(of a program checked through backward, whose outputs are right), every op of the program is
a suspect. Masks are the failures a campaign no longer reports.

Failures are ranked by what they cost a user (RANKS): a crash, hang or error where eager runs;
then wrong values; then a NaN/Inf pattern; then a signed zero or a layout, listed apart
because many users do not care about those.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from minifier.fuzz.drawn_program import Program
from minifier.fuzz.op_catalog import resolve_ops
from minifier.workers.answer import Answer


# rank -> what it is; the rung (or failure kind) of each
RANKS = {1: "error", 2: "values", 3: "NaN/Inf", 4: "sign/layout/limit"}
RANK_WORDS = {1: "a crash, hang or error where eager runs", 2: "wrong values",
              3: "a NaN/Inf pattern eager does not have",
              4: "a signed zero, a layout, or an infinity where eager makes NaN from infinite inputs "
                 "(listed apart: the user decides whether it matters)"}
RANK_OF = {"crash": 1, "hang": 1, "compile_error": 1, "runtime_error": 1, "exception": 1, "meta": 2, "values": 2,
           "exact": 2, "bitwise": 2, "nan_inf": 3, "signed_zero": 4, "layout": 4, "inf_for_nan": 4}


@dataclass
class Failure:
    """One shrunk failing program and what it did."""

    signature: str
    kind: str
    message: str
    suspects: list[str]  # ops to blame
    program: Program = field(repr=False)
    example: int = 0  # examples drawn when it was first seen
    rung: str = ""  # the oracle's rung that fired ("exception" for errors)
    dtype: str = ""  # of the first wrong output, else of the program's inputs
    gradient: str | None = None  # `grad[x1]`: the first wrong output is the gradient of input x1

    @property
    def key(self) -> str:
        where = f" {self.gradient}" if self.gradient else ""
        return f"{self.signature}{where} [{', '.join(self.suspects)}]"

    @property
    def rank(self) -> int:
        return RANK_OF.get(self.rung, RANK_OF.get(self.kind, 2))



def first_wrong(outcome: dict) -> dict:
    """The metrics of the output the oracle judged by: the first wrong one on the failing rung,
    a step's output before a gradient (compiler.oracle.outcome_of)."""
    from compiler.grads import gradient_output

    answer = Answer.from_wire(outcome)
    wrong = [m for m in answer.metrics if not m.get("ok") and not m.get("noise")]
    wrong = [m for m in wrong if gradient_output(m.get("output", "")) is None] or wrong
    return next((m for m in wrong if m.get("rung", "values") == answer.rung), wrong[0] if wrong else {})


def suspects(outcome: dict, program: Program) -> list[str]:
    """Ops to blame: the step of the first wrong output for accuracy (`out[2]`, or `out['out'][2]`
    beside written inputs or gradients), else every op."""
    if Answer.from_wire(outcome).kind == "accuracy":
        match = re.match(r"out(?:\['out'\])?\[(\d+)\]", first_wrong(outcome).get("output", ""))
        if match and int(match.group(1)) < len(program.steps):
            return [program.steps[int(match.group(1))].op]
    return sorted(set(program.ops()))


def gradient_of(outcome: dict, program: Program) -> str | None:
    """`grad[x1]` when the first wrong output of an accuracy failure is input x1's gradient."""
    from compiler.grads import gradient_output

    if Answer.from_wire(outcome).kind != "accuracy":
        return None
    index = gradient_output(first_wrong(outcome).get("output", ""))
    names = list(program.inputs)
    return None if index is None or index >= len(names) else f"grad[{names[index]}]"


def failing_dtype(outcome: dict, program: Program) -> str:
    bad = first_wrong(outcome)
    if bad.get("dtype"):
        return bad["dtype"]
    return ",".join(sorted({str(t.dtype).replace("torch.", "") for t in program.input_list()}))


def classify(outcome: dict, program: Program, example: int = 0) -> Failure:
    answer = Answer.from_wire(outcome)
    kind = answer.kind or "?"
    rung = answer.rung or (kind if kind in ("crash", "hang") else "")
    if rung == "nan_inf" and first_wrong(outcome).get("nan_for_inf") and _has_infinity(program):
        # eager NaN where compiled has +-inf, from infinite inputs: which is right depends on the
        # op (var_mean's Welford makes inf - inf where the mean is -inf; Python's inf // 0.5 is nan)
        rung = "inf_for_nan"
    return Failure(answer.signature or kind, kind, answer.message or "", suspects(outcome, program),
                   program, example, rung, failing_dtype(outcome, program), gradient_of(outcome, program))


def _has_infinity(program: Program) -> bool:
    return any(t.is_floating_point() and bool(t.isinf().any()) for t in program.input_list())


@dataclass
class Masks:
    """Failures a campaign no longer reports: the user's masks and those already found."""

    ops: set[str] = field(default_factory=set)  # a failure blaming any of these ops
    rungs: set[str] = field(default_factory=set)  # a failure on any of these rungs (signed_zero, layout, ...)
    signatures: list[str] = field(default_factory=list)  # signature prefixes
    keys: set[str] = field(default_factory=set)  # exact `signature [ops]` keys (as in fuzz.json)
    known: list[Failure] = field(default_factory=list)

    @staticmethod
    def parse(specs: list[str]) -> "Masks":
        masks = Masks()
        for spec in specs:
            if spec.endswith("]") and " [" in spec:
                masks.keys.add(spec)
            elif "@" in spec:
                masks.signatures.append(spec)
            elif spec in RANK_OF:
                masks.rungs.add(spec)
            else:
                masks.ops |= {e.name for e in resolve_ops([spec])}
        return masks

    def matches(self, f: Failure) -> bool:
        if f.key in self.keys or self.ops & set(f.suspects) or f.rung in self.rungs or \
                any(f.signature.startswith(s) for s in self.signatures):
            return True
        return any(k.signature == f.signature and set(k.suspects) <= set(f.suspects)
                   and (k.gradient is None) == (f.gradient is None) for k in self.known)
