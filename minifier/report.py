"""What the user sees: progress while the tool works, and a clear summary at the end."""
from __future__ import annotations

import time

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from minifier.graph_edit import op_nodes


class ConsoleUI:
    def __init__(self, console: Console | None = None, quiet: bool = False):
        self.console = console or Console(stderr=True)
        self.quiet = quiet
        self.start = time.perf_counter()

    def _say(self, text: str) -> None:
        if not self.quiet:
            self.console.print(f"[dim]{time.perf_counter() - self.start:6.1f}s[/dim] {text}")

    def step(self, text: str) -> None:
        self._say(text)

    def capture_done(self, capture) -> None:
        failing = [g.index for g in capture.failing]
        self._say(f"captured {len(capture.graphs)} graph(s) in {capture.seconds:.1f}s; "
                  f"failing: {', '.join(map(str, failing)) or 'none'}")

    def progress(self, pass_name: str, gm) -> None:
        self._say(f"  {pass_name}: {len(op_nodes(gm))} ops left")


def print_summary(report: dict, console: Console) -> None:
    if report.get("status") == "nothing_failed":
        console.print(Panel(f"Nothing failed: {report['graph_count']} compiled graph(s) matched eager.",
                            title="minify", border_style="green"))
        return
    failure = report["failure"]
    ok = report["status"] == "reproduced"
    table = Table(show_header=False, box=None)
    table.add_row("failure", f"[bold]{failure['kind']}[/bold]: {failure['message']}")
    table.add_row("signature", failure["signature"])
    table.add_row("graph", f"{report['failing_graph'] + 1} of {report['graph_count']} (index {report['failing_graph']})")
    table.add_row("stage", report["stage"] + ("" if report["stage"] == "inductor" else
                                               "  (fails before Inductor: not an Inductor bug)"))
    if report.get("first_divergent"):
        table.add_row("first divergent node", report["first_divergent"])
    table.add_row("ops", f"{report['ops_before']} -> {report['ops_after']}: {', '.join(report['ops'])}")
    table.add_row("compiles", f"{report['compiles']} (cache hits {report['cache_hits']}, "
                              f"worker restarts {report['worker_restarts']})")
    table.add_row("wall time", f"{report['wall_seconds']:.1f} s (capture {report['capture_seconds']:.1f} s)")
    table.add_row("repro", f"{report['repro']}  [{'green' if ok else 'red'}]"
                           f"{'verified: ' if ok else 'NOT verified: '}{report.get('verify_line') or ''}")
    table.add_row("inputs", report["inputs"])
    graphs = Table(title="graphs", show_lines=False)
    for col in ("index", "nodes", "failing", "kind"):
        graphs.add_column(col)
    for g in report["graphs"]:
        graphs.add_row(str(g["index"]), str(g["nodes"]), "yes" if g["failing"] else "", g.get("kind") or "")
    console.print(graphs)
    console.print(Panel(Syntax(report["graph_code"].strip("\n"), "python", theme="ansi_dark"),
                        title="minimized graph"))
    console.print(Panel(table, title="minify", border_style="green" if ok else "red"))
