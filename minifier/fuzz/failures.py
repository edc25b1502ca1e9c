"""What a fuzzing failure is, and when two are the same.

Two failures are the same when their signatures match and the ops to blame do: accuracy
signatures carry no op, so the op is taken from the first wrong output (every step's output
is returned); for an exception, every op of the program is a suspect. Masks are the failures a
campaign no longer reports.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from minifier.fuzz.drawn_program import Program
from minifier.fuzz.op_catalog import resolve_ops


@dataclass
class Failure:
    """One shrunk failing program and what it did."""

    signature: str
    kind: str
    message: str
    suspects: list[str]  # ops to blame
    program: Program = field(repr=False)
    example: int = 0  # examples drawn when it was first seen

    @property
    def key(self) -> str:
        return f"{self.signature} [{', '.join(self.suspects)}]"



def suspects(outcome: dict, program: Program) -> list[str]:
    """Ops to blame: the step of the first wrong output for accuracy, else every op."""
    if outcome.get("kind") == "accuracy":
        bad = next((m for m in outcome.get("metrics") or [] if not m.get("ok")), {})
        match = re.match(r"out\[(\d+)\]", bad.get("output", ""))
        if match and int(match.group(1)) < len(program.steps):
            return [program.steps[int(match.group(1))].op]
    return sorted(set(program.ops()))


def classify(outcome: dict, program: Program, example: int = 0) -> Failure:
    return Failure(outcome.get("signature") or outcome.get("kind", "?"), outcome.get("kind", "?"),
                   outcome.get("message", ""), suspects(outcome, program), program, example)


@dataclass
class Masks:
    """Failures a campaign no longer reports: the user's masks and those already found."""

    ops: set[str] = field(default_factory=set)  # a failure blaming any of these ops
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
            else:
                masks.ops |= {e.name for e in resolve_ops([spec])}
        return masks

    def matches(self, f: Failure) -> bool:
        if f.key in self.keys or self.ops & set(f.suspects) or any(f.signature.startswith(s) for s in self.signatures):
            return True
        return any(k.signature == f.signature and set(k.suspects) <= set(f.suspects) for k in self.known)
