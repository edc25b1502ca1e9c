"""What the user sees: progress while the tool works, and a clear summary at the end."""
from __future__ import annotations

import time

from rich.console import Console
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from compiler.rungs import RUNG_WORDS
from minifier.distributed.command import rank_lines
from minifier.report import numerics
from minifier.report.live import LiveLine, is_live_terminal
from minifier.report.rows import finding_counts, findings_line
from minifier.report.run_status import RunStatus


class ConsoleUI:
    """The run's progress: a timestamped line per step (what a log or a pipe gets, unchanged),
    and on a terminal, while used as `with ConsoleUI(...) as ui:`, the output folder at once and
    a status line under the steps that ticks: elapsed time, the step, graphs captured so far,
    checks run, the size of the graph being reduced (minifier.report.live)."""

    def __init__(self, console: Console | None = None, quiet: bool = False, start: float | None = None,
                 launched=None):
        self.console = console or Console(stderr=True)
        self.quiet = quiet
        self.start = time.perf_counter() if start is None else start  # times shown are since the run began
        self.launched = launched  # its output folder and work/capture, where the capture writes a folder per graph
        self.status = RunStatus(self.start, None if launched is None else launched.work / "capture")
        self.line = LiveLine(self.console, self.status.text) if not quiet and launched is not None else None

    def __enter__(self) -> "ConsoleUI":
        if self.line is not None and is_live_terminal(self.console):
            log = self.launched.work / "minify.log"
            self.console.print(Text.assemble(("minify", "bold"), " \u2192 ", (str(self.launched.out), "bold cyan"),
                                             ("   (log: ", "dim"), (str(log), "dim"), (")", "dim")))
            self.line.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.line is not None:
            self.line.stop()

    def watch(self, session) -> None:
        """The run's shared state (minifier.start.session): the status line counts its checks."""
        self.status.session = session

    def _say(self, text: str) -> None:
        if not self.quiet:
            self.console.print(f"[dim]{time.perf_counter() - self.start:6.1f}s[/dim] {escape(text)}")

    def step(self, text: str) -> None:
        self.status.heard(text)
        self._say(text)

    def capture_done(self, capture) -> None:
        self.status.capture = capture
        failing = [str(g.index) for g in capture.failing]  # "failing: 0" read as a count: name the graphs
        named = f"graph{'s' * (len(failing) > 1)} {', '.join(failing)}" if failing else "none"
        self._say(f"captured {len(capture.graphs)} graph(s) in {capture.seconds:.1f}s; failing: {named}")

    def progress(self, pass_name: str, gm) -> None:
        from minifier.graph.edit import op_nodes  # torch.fx: not before the run needs it

        self._say(f"  {pass_name}: {len(op_nodes(gm))} ops left")


def print_summary(report: dict, console: Console) -> None:
    """The summary is the command's result: on standard output where `console` is the error console."""
    console = getattr(console, "results", console)
    console.print(_graphs_table(report))
    for line in rank_lines(report):  # a distributed job: how each rank ended (minifier/distributed)
        console.print(Text(line))
    if report.get("status") == "nothing_failed":
        notes = [f"graph {g['index']}: {g['note']}" for g in report["graphs"] if g.get("note")]
        e2e = report.get("end_to_end") or {}
        if e2e.get("trusted") is False:  # a difference was seen, but cannot be told from the script's own noise
            notes.append(f"the program's outputs differed ({e2e.get('message')}), but {e2e.get('why')}: "
                         f"not counted as a failure")
        console.print(Panel(Text("\n".join([f"Nothing failed: {report['graph_count']} compiled graph(s) matched eager."]
                                           + notes)), title="minify", border_style="green"))
        return
    if report.get("status") == "interaction":
        console.print(_interaction_panel(report))
        return
    if report.get("status") == "program":
        console.print(_program_panel(report))
        return
    if report.get("status") == "numerics":
        table = _Rows()
        for key, value in numerics.console_rows(report["numerics"]):
            table.add_row(key, Text(value, style="bold" if key == "verdict" else ""))
        if report.get("html"):
            table.add_row("report", Text(report["html"]))
        console.print(Panel(table, title="minify: numerics", border_style="yellow"))
        return
    bugs = report.get("bugs") or [report]
    for number, bug in enumerate(bugs, 1):
        if bug.get("graph_code"):
            console.print(Panel(Syntax(bug["graph_code"].strip("\n"), "python", theme="ansi_dark"),
                                title=f"bug {number}: minimized graph"))
        console.print(_bug_table(bug, report, number, len(bugs)))
    totals = _Rows()
    totals.add_row("findings", findings_line(report.get("findings") or finding_counts(bugs)))
    totals.add_row("compiles", f"{report['compiles']} (cache hits {report['cache_hits']}, "
                               f"worker restarts {report['worker_restarts']})")
    to_repro = f", verified repro after {report['seconds_to_repro']:.1f} s" if report.get("seconds_to_repro") else ""
    totals.add_row("wall time", f"{report['wall_seconds']:.1f} s (capture {report['capture_seconds']:.1f} s{to_repro})")
    if report.get("phases"):
        totals.add_row("phases", phase_line(report["phases"]))
    if report.get("html"):
        totals.add_row("report", report["html"])
    if report.get("issue"):
        totals.add_row("issue text", report["issue"])
    for path in report.get("tests") or []:
        totals.add_row("test", path)
    if report.get("gpu_health"):
        health = report["gpu_health"]
        totals.add_row("GPU after", f"answers ({health['seconds']} s)" if health["ok"] else
                       f"[bold red]DOES NOT ANSWER[/bold red]: {health['message']}")
    ok = report["status"] == "reproduced"
    console.print(Panel(totals, title="minify", border_style="green" if ok else "red"))


def phase_line(phases: dict) -> str:
    """Wall seconds per phase; they overlap (verification and blame run beside the search)."""
    return ", ".join(f"{name} {seconds:.1f} s" for name, seconds in phases.items()) + " (phases overlap)"


def _graphs_table(report: dict) -> Table:
    graphs = Table(title="graphs")
    for col in ("index", "part", "nodes", "stages", "failing", "kind", "note"):
        graphs.add_column(col, overflow="fold")
    for g in report["graphs"]:
        part = "bw" if g.get("part") == "backward" else "fw"
        if g.get("part") == "backward":
            part += f" of {g.get('dynamo_graph')}"
        stages = " ".join(f"{STAGE_SHORT.get(s, s)}:{v.split()[0]}" for s, v in (g.get("stages") or {}).items()) \
            or (g.get("verdict") or "")
        graphs.add_row(*map(Text, (str(g["index"]), part, str(g["nodes"]), stages, "yes" if g["failing"] else "",
                                   g.get("kind") or "", g.get("note") or "")))
    return graphs


class _Rows(Table):
    """A two-column table of names and values; a value given as a string is shown as it is
    (user code, torch's messages and paths hold `[...]`, which rich would read as markup)."""

    def __init__(self):
        super().__init__(show_header=False, box=None)
        self.add_column(no_wrap=True)
        self.add_column(overflow="fold")  # a long kernel name or path folds onto the next line, never cut

    def add_row(self, *cells, **kwargs) -> None:
        super().add_row(*(Text(c) if isinstance(c, str) else c for c in cells), **kwargs)


STAGE_SHORT = {"aot_eager": "aot", "aot_eager_decomp_partition": "decomp"}
# --inject runs: whether the repro still fails without the planted bug (minifier/emit/repro_folders.py)
PLANT_ROWS = {"needed": Text("needed: without it the repro passes (this is the planted bug)"),
              "not needed": Text("not needed: the repro fails without it too, a real bug found beside the plant "
                                 "(repro.py carries no plant)", style="bold yellow")}


def _interaction_panel(report: dict) -> Panel:
    """No graph fails alone; the program does: which graphs must be compiled together."""
    inter = report["interaction"]
    table = _Rows()
    table.add_row("end to end", inter["end_to_end"]["message"])
    if inter["keys"]:
        table.add_row("fails only with", f"graphs {', '.join(map(str, inter['graphs']))} compiled together "
                                         f"(keys {', '.join(inter['keys'])}); each alone matches eager")
    else:
        table.add_row("fails only with", Text("the failure did not come back when rerun (flaky?)", style="red"))
    table.add_row("subset runs", f"{len(inter['runs'])} in {inter['seconds']:.1f} s"
                                 + ("" if inter["complete"] else " (run budget spent: not minimal)"))
    table.add_row("note", inter["note"])
    if report.get("html"):
        table.add_row("report", report["html"])
    return Panel(table, title="minify: graphs that fail together", border_style="red")


def _program_panel(report: dict) -> Panel:
    """No graph fails alone: the layer to blame and the reduced program."""
    program, layer = report["program"], report.get("layer") or {}
    table = _Rows()
    table.add_row("layer", f"{layer.get('name')}" + (f" (fails with backend={layer['backend']})" if layer.get("backend") else ""))
    table.add_row("rungs", ", ".join(f"{r['backend']}: {'fails' if r['fails'] else 'passes'}" for r in layer.get("runs", [])))
    inter = report.get("interaction") or {}
    if len(inter.get("graphs") or []) >= 2:
        table.add_row("graphs", f"{', '.join(map(str, inter['graphs']))} fail only when compiled together "
                                f"(found in {len(inter['runs'])} subset runs)")
    table.add_row("failure", str(program.get("message") or program.get("signature")))
    if program.get("repro"):
        table.add_row("program", f"{program['lines_before']} -> {program['lines_after']} lines in {program['runs']} runs "
                                 f"({program['seconds']:.1f} s)" + ("" if program.get("complete") else ", budget spent"))
        table.add_row("repro", f"{program['repro']}  verified: {'yes' if program['verified'] else 'NO'}")
    if report.get("issue"):
        table.add_row("issue text", report["issue"])
    table.add_row("wall time", f"{report['wall_seconds']:.1f} s")
    if report.get("phases"):
        table.add_row("phases", phase_line(report["phases"]))
    ok = bool(program.get("verified"))
    return Panel(table, title="minify: a failure of the whole program", border_style="green" if ok else "red")


def _divergence_rows(table: Table, bug: dict) -> None:
    """First divergent node(s) with their error, origin and the kernel that computes them."""
    for node in bug.get("first_divergent_nodes") or []:
        m = node.get("metrics") or {}
        err = ", ".join(f"{k}={m[k]:.3g}" for k in ("max_abs_err", "mismatch_fraction") if k in m)
        origin = node.get("origin")
        where = f"{origin['file'].rsplit('/', 1)[-1]}:{origin['line']} {origin['code']}" if origin else ""
        if node.get("gradient_of"):
            where = f"gradient of {node['gradient_of']} {where}".strip()
        kernels = ", ".join(k["name"] for k in node.get("kernels") or []) or "no kernel of its own"
        table.add_row("divergent node", Text.assemble((node["name"], "bold"), f" ({node['op']}) {err}"))
        if where:
            table.add_row("  from", where)
        table.add_row("  kernel", kernels)


def _bug_table(bug: dict, report: dict, number: int, count: int) -> Panel:
    failure = bug["failure"]
    table = _Rows()
    table.add_row("failure", Text.assemble((failure["kind"], "bold"), f": {failure['message']}"))
    if failure.get("rung"):
        table.add_row("check", f"{failure['rung']}: {RUNG_WORDS.get(failure['rung'], '')}")
    table.add_row("signature", failure["signature"])
    also = f"; same bug in graph(s) {', '.join(map(str, bug['also_in_graphs']))}" if bug.get("also_in_graphs") else ""
    part = f", {bug['part']}" if bug.get("part") else ""
    if bug.get("aoti_package") is not None:  # an exported program compiled with AOTInductor, not a Dynamo graph
        table.add_row("graph", f"AOTInductor package {bug['aoti_package']}'s exported graph (reduced with "
                               f"{bug.get('reduced_with')})")
    else:
        table.add_row("graph", f"{bug['failing_graph'] + 1} of {report['graph_count']} (index {bug['failing_graph']}"
                               f"{part}){also}")
    for other in bug.get("also_reduced") or []:  # the same bug found and reduced in another graph
        table.add_row("also in", f"graph {other['failing_graph'] + 1} (index {other['failing_graph']}, "
                                 f"{other.get('part') or '?'}): reduced there to {', '.join(other.get('ops') or [])} "
                                 f"({other.get('repro')}): {other['why']}")
    table.add_row("stage", bug["stage"] + ("" if bug["stage"] == "inductor" else
                                           "  (fails before Inductor: not an Inductor bug)"))
    table.add_row("reproduced", Text.assemble(f"{bug['reproduced']} times", ("  flaky" if bug.get("flaky") else "", "red")))
    if bug.get("replay"):
        table.add_row("replay", bug["replay"])
    if bug.get("first_divergent_nodes"):
        _divergence_rows(table, bug)
    elif bug.get("first_divergent"):
        table.add_row("first divergent node", bug["first_divergent"])
    if bug.get("kernels"):
        table.add_row("repro kernel", ", ".join(k["name"] for k in bug["kernels"]))
    if "ops_after" in bug:
        table.add_row("ops", f"{bug['ops_before']} -> {bug['ops_after']}: {', '.join(bug['ops'])}")
    ok = bug.get("verified") is not False and "repro" in bug
    if "repro" in bug:
        state = {True: "verified: ", False: "NOT verified: ", None: "not verified (--no-verify)"}[bug.get("verified")]
        table.add_row("repro", Text.assemble(f"{bug['repro']}  ", (f"{state}{bug.get('verify_line') or ''}",
                                                                  "green" if ok else "red")))
        table.add_row("inputs", bug["inputs"] or "inline in repro.py")
    if bug.get("plant"):
        table.add_row("plant", PLANT_ROWS[bug["plant"]])
    if bug.get("unverified"):
        table.add_row("not reproduced", Text(bug["unverified"], style="red"))
    from minifier.report.blame import blame_lines  # it imports torch: not before the summary needs it
    for line in blame_lines(bug.get("blame") or []):
        table.add_row("blame", line)
    if bug.get("blame_error"):
        table.add_row("blame", Text(bug["blame_error"], style="yellow"))
    if bug.get("same_cause_as"):
        table.add_row("cause", f"blamed on the same part as bug {bug['same_cause_as']}: likely one bug, two repros")
    title = f"{'finding' if bug.get('unverified') else 'bug'} {number} of {count}"
    return Panel(table, title=title + (": not reproduced" if bug.get("unverified") else ""),
                 border_style="green" if ok else "red")
