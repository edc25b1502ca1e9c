"""The run's ending where the collective itself is the bug (minifier/distributed/two_rank.py): no
one-process reduction can show it, so the repro is written for the ranks and verified there."""
from __future__ import annotations

import time

from minifier.capture.process import Capture
from minifier.distributed import two_rank
from minifier.exit_codes import EXIT_NOT_REPRODUCED, EXIT_OK
from minifier.report.rows import graph_row, write_report
from minifier.start.launch import Result


def collective_bug(graphs) -> object | None:
    """The pipeline's question: does the chosen rank's failure lie in a collective itself?"""
    return two_rank.collective_bug(graphs)


def collective_result(session, capture: Capture, g) -> Result:
    nproc = len(capture.script["ranks"])
    session.ui.step(f"graph {g.index}: without its collectives it passes on one process; the collective itself "
                    f"is the bug: writing a repro on {nproc} ranks")
    row = two_rank.report_row(session.out, g, capture.script["rank"], nproc, session.opts.script.name,
                              len(capture.graphs))
    session.ui.step(f"verified: {row['verified']} ({row['verify_line']})")
    report = {"status": "reproduced" if row["verified"] else "not_reproduced", "script": str(session.opts.script),
              "graphs": [graph_row(x) for x in capture.graphs], "graph_count": len(capture.graphs),
              "failing_graphs": [g.index], "rank": capture.script["rank"], "ranks": capture.script["ranks"],
              "capture_seconds": round(capture.seconds, 2), "compiles": 0, "cache_hits": 0, "worker_restarts": 0,
              "wall_seconds": round(time.perf_counter() - session.start, 2), **row}
    if not row["verified"]:
        row["unverified"] = f"its repro did not verify on {nproc} ranks ({row['verify_line']})"
    report.update(row, bugs=[row])
    write_report(session.out, report)
    return Result(EXIT_OK if row["verified"] else EXIT_NOT_REPRODUCED, report)
