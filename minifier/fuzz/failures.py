"""What a fuzzing failure is, and when two are the same.

Two failures are the same when their signatures match and the ops to blame do: accuracy
signatures carry no op, so the op is taken from the first wrong output (every step's output
is returned); for an exception, every op of the program is a suspect. Masks are the failures a
campaign no longer reports.

Failures are ranked by what they cost a user (RANKS): a crash, hang or error where eager runs;
then wrong values; then a NaN/Inf pattern; then a signed zero or a layout, listed apart
because many users do not care about those.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from minifier.fuzz.drawn_program import Program
from minifier.fuzz.op_catalog import resolve_ops


# rank -> what it is; the rung (or failure kind) of each
RANKS = {1: "error", 2: "values", 3: "NaN/Inf", 4: "sign/layout"}
RANK_WORDS = {1: "a crash, hang or error where eager runs", 2: "wrong values",
              3: "a NaN/Inf pattern eager does not have",
              4: "a signed zero or layout (listed apart: the user decides whether it matters)"}
RANK_OF = {"crash": 1, "hang": 1, "compile_error": 1, "runtime_error": 1, "exception": 1, "meta": 2, "values": 2,
           "exact": 2, "bitwise": 2, "nan_inf": 3, "signed_zero": 4, "layout": 4}


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

    @property
    def key(self) -> str:
        return f"{self.signature} [{', '.join(self.suspects)}]"

    @property
    def rank(self) -> int:
        return RANK_OF.get(self.rung, RANK_OF.get(self.kind, 2))



def suspects(outcome: dict, program: Program) -> list[str]:
    """Ops to blame: the step of the first wrong output for accuracy, else every op."""
    if outcome.get("kind") == "accuracy":
        bad = next((m for m in outcome.get("metrics") or [] if not m.get("ok")), {})
        match = re.match(r"out\[(\d+)\]", bad.get("output", ""))
        if match and int(match.group(1)) < len(program.steps):
            return [program.steps[int(match.group(1))].op]
    return sorted(set(program.ops()))


def failing_dtype(outcome: dict, program: Program) -> str:
    bad = next((m for m in outcome.get("metrics") or [] if not m.get("ok") and m.get("dtype")), None)
    if bad:
        return bad["dtype"]
    return ",".join(sorted({str(t.dtype).replace("torch.", "") for t in program.input_list()}))


def classify(outcome: dict, program: Program, example: int = 0) -> Failure:
    kind = outcome.get("kind", "?")
    rung = outcome.get("rung") or (kind if kind in ("crash", "hang") else "")
    return Failure(outcome.get("signature") or kind, kind, outcome.get("message", ""), suspects(outcome, program),
                   program, example, rung, failing_dtype(outcome, program))


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
        return any(k.signature == f.signature and set(k.suspects) <= set(f.suspects) for k in self.known)
