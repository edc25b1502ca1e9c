"""Judging an answer: is it the failure being minified, or another bug, or no run at all?

A Judge holds what the failure wanted looks like: its signature (compiler.signature) and, for
accuracy, the node where values first diverge (the culprit), which must stay in the graph. It
never asks anything (minifier.workers.ask does); it reads Answers.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch.fx as fx

from minifier.graph.edit import op_names
from minifier.workers.answer import Answer

REPRODUCES, PASSES, INVALID = "reproduces", "passes", "invalid"


@dataclass(frozen=True)
class Judge:
    """The failure wanted: `signature`, and for accuracy the `culprit` node kept in the graph."""

    signature: str
    culprit: str | None = None

    def verdict(self, wire: dict | Answer, gm: fx.GraphModule | None = None) -> str:
        """Same signature, and for accuracy the same first divergent node, or it is another bug."""
        answer = wire if isinstance(wire, Answer) else Answer.from_wire(wire)
        if answer.failed:
            if answer.signature != self.signature:
                return PASSES
            if self.culprit and gm is not None and self.culprit not in op_names(gm):
                return PASSES
            return REPRODUCES
        return INVALID if answer.status == "invalid" else PASSES
