"""A status line that ticks on a terminal: rich's Live, redrawn a few times a second under the
lines printed above it, so that a person sees the run move (elapsed time, phase, counts) while
a step takes minutes. Only on a terminal; a log or a pipe gets the plain lines alone.

Every exit path stops it: its owner's `with` on an exception or Ctrl-C, and the run's stop
(minifier.workers.stop) at the signal itself, on a thread of its own, so that the signal's
handler is never kept waiting and the cursor is shown again before anything else is printed."""
from __future__ import annotations

import threading
import time
from typing import Callable

from rich.console import Console
from rich.live import Live
from rich._spinners import SPINNERS
from rich.text import Text

REFRESH_PER_SECOND = 4


def is_live_terminal(console: Console) -> bool:
    """A terminal that can redraw a line (not a dumb one, not a notebook)."""
    return console.is_terminal and not console.is_dumb_terminal and not console.is_jupyter


class _Ticking:
    """What the Live draws: a spinner's frame and the line `render` makes, asked afresh at each
    redraw, on one line (cut with an ellipsis, never wrapped: a wrapped line is redrawn badly)."""

    FRAMES = SPINNERS["dots"]["frames"]
    INTERVAL = SPINNERS["dots"]["interval"] / 1000

    def __init__(self, render: Callable[[], Text]):
        self.render = render

    def __rich_console__(self, console, options):
        try:
            line = self.render()
        except Exception as exc:  # a status line must never end the run
            line = Text(f"(status unavailable: {type(exc).__name__})", style="dim")
        frame = self.FRAMES[int(time.monotonic() / self.INTERVAL) % len(self.FRAMES)]
        text = Text.assemble((frame, "cyan"), " ", line)
        text.truncate(options.max_width, overflow="ellipsis")
        yield text


class LiveLine:
    """The ticking line on `console`, while started; does nothing where `console` is no terminal."""

    def __init__(self, console: Console, render: Callable[[], Text]):
        self.console = console
        self.live: Live | None = None
        self.stop_key: int | None = None
        self.lock = threading.Lock()
        if is_live_terminal(console):
            # standard output and error stay where they are: the run's log holds file descriptor 2,
            # and the summary goes to standard output after the line is gone
            self.live = Live(_Ticking(render), console=console, refresh_per_second=REFRESH_PER_SECOND,
                             transient=True, redirect_stdout=False, redirect_stderr=False)

    @property
    def active(self) -> bool:
        return self.live is not None and self.live.is_started

    def start(self) -> "LiveLine":
        if self.live is not None:
            from minifier.workers.stop import STOP

            self.live.start(refresh=True)
            # at Ctrl-C or SIGTERM: gone at once (the ender must not wait: a thread of its own does)
            self.stop_key = STOP.on_stop(lambda: threading.Thread(target=self.stop, daemon=True,
                                                                  name="live-line-stop").start())
        return self

    def stop(self) -> None:
        with self.lock:
            live, self.live = self.live, None
        if live is not None:
            live.stop()
        if self.stop_key is not None:
            from minifier.workers.stop import STOP

            STOP.forget(self.stop_key)
            self.stop_key = None

    def __enter__(self) -> "LiveLine":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def clock(seconds: float) -> str:
    """12.3s under a minute, 4m05s above."""
    if seconds < 60:
        return f"{seconds:5.1f}s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes}m{rest:02d}s"


def status_text(start: float, parts: list[str]) -> Text:
    """`elapsed · part · part ...`: the elapsed time bold, the rest plain (never read as markup)."""
    line = Text()
    line.append(clock(time.perf_counter() - start), style="bold")
    for part in parts:
        if part:
            line.append("  ·  ", style="dim")
            line.append(part)
    return line
