"""The ticking status line: drawn only on a terminal, counts read from the run, stopped on exit."""
import io
import time

from rich.console import Console

from minifier.report.console import ConsoleUI
from minifier.report.live import LiveLine, status_text
from minifier.report.run_status import RunStatus


def test_status_counts_graph_folders_and_follows_the_reduction(tmp_path):
    capture = tmp_path / "capture"
    status = RunStatus(time.perf_counter() - 12.5, capture)
    assert status.graphs() == 0  # the capture has not made its folder yet
    for i in range(3):
        (capture / f"graph_{i}").mkdir(parents=True)
    (capture / "calls").mkdir()
    assert status.graphs() == 3
    status.heard("graph 0: reducing 21 ops (accuracy at inductor, first divergent node relu)")
    status.heard("  shrink_shapes: 4 ops left")
    status.heard("  -> lowering: a blame detail")  # an indented detail leaves the phase as it was
    line = status.text().plain
    assert "12." in line and "3 graphs" in line and "21 \u2192 4 ops (shrink_shapes)" in line
    assert line.endswith("graph 0: reducing 21 ops (accuracy at inductor, first divergent node relu)")


def test_live_line_ticks_on_a_terminal_and_is_gone_after(tmp_path):
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    start = time.perf_counter()
    with LiveLine(console, lambda: status_text(start, ["2 graphs", "[bold]capturing[/bold]"])) as line:
        assert line.active
        time.sleep(0.8)
        console.print("a step")
    assert not line.active
    out = screen.getvalue()
    assert out.count("2 graphs") >= 2  # redrawn while it ran
    assert "[bold]capturing[/bold]" in out  # text, never markup
    assert "a step" in out and out.rindex("\x1b[?25h") > out.rindex("2 graphs")  # the cursor is shown again, last


def test_no_terminal_no_live_line_and_the_same_plain_lines(tmp_path):
    class Launched:
        out, work, start = tmp_path, tmp_path / "work", time.perf_counter()

    screen = io.StringIO()
    with ConsoleUI(Console(file=screen, width=200), start=Launched.start, launched=Launched) as ui:
        assert ui.line is not None and not ui.line.active
        ui.step("starting workers")
    assert screen.getvalue().splitlines() == [screen.getvalue().splitlines()[0]]
    assert screen.getvalue().strip().endswith("s starting workers") and "\x1b" not in screen.getvalue()


def test_quiet_has_neither_lines_nor_live_line(tmp_path):
    class Launched:
        out, work, start = tmp_path, tmp_path / "work", time.perf_counter()

    screen = io.StringIO()
    with ConsoleUI(Console(file=screen, force_terminal=True, width=100), quiet=True, launched=Launched) as ui:
        ui.step("starting workers")
        time.sleep(0.3)
    assert screen.getvalue() == ""
