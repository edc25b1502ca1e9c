"""What the ticking status line of `minify SCRIPT` says (minifier.report.live draws it): the
step the run is at, graphs captured so far (counted from the capture's folder while the script
runs), checks the workers answered, and the size of the graph being reduced, read from the
steps the run reports."""
from __future__ import annotations

import os
import re
from pathlib import Path

from rich.text import Text

from minifier.report.live import status_text

REDUCING = re.compile(r"graph (\d+): reducing (\d+) ops")
PASS_KEPT = re.compile(r"^\s+(\w+): (\d+) ops left")
NOT_CHECKS = {"warmup", "capture", "experiment"}  # timeline rows that are no check of a graph (experiment: blame's)


class RunStatus:
    """The status line's facts, updated from the steps (`heard`) and read at each redraw (`text`)."""

    def __init__(self, start: float, capture_folder: Path | None):
        self.start = start
        self.capture_folder = capture_folder
        self.capture = None  # the Capture once it ended: its graph count is the count
        self.session = None  # minifier.start.session.Session, once the run has one: its checks
        self.phase = "starting (loading torch)"
        self.size: tuple[int, int] | None = None  # ops of the graph being reduced: at the start, now
        self.kept_by = ""  # the pass that kept the last smaller graph

    def heard(self, step: str) -> None:
        kept = PASS_KEPT.match(step)
        if kept and self.size is not None:
            self.size, self.kept_by = (self.size[0], int(kept.group(2))), kept.group(1)
            return
        if step.startswith(" "):  # a detail of the step before (blame's experiments): the phase stays
            return
        self.phase = step  # the line is cut to the terminal's width where it is drawn
        reducing = REDUCING.search(step)
        if reducing:
            self.size, self.kept_by = (int(reducing.group(2)), int(reducing.group(2))), ""

    def graphs(self) -> int | None:
        """Graphs captured so far: the capture's count once it ended, else its folders."""
        if self.capture is not None:
            return len(self.capture.graphs)
        if self.capture_folder is None:
            return None
        try:
            return sum(1 for name in os.listdir(self.capture_folder) if name.startswith("graph_"))
        except OSError:  # not made yet
            return 0

    def checks(self) -> int | None:
        if self.session is None:
            return None
        return sum(1 for row in list(self.session.pool.timeline) if row.get("op") not in NOT_CHECKS)

    def text(self) -> Text:
        graphs, checks = self.graphs(), self.checks()
        parts = [None if graphs is None else f"{graphs} graph{'s' * (graphs != 1)}",
                 None if checks is None else f"{checks} check{'s' * (checks != 1)}"]
        if self.size is not None:
            parts.append(f"{self.size[0]} \u2192 {self.size[1]} ops" + (f" ({self.kept_by})" if self.kept_by else ""))
        return status_text(self.start, [p for p in parts if p] + [self.phase])
