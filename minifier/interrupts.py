"""Ctrl-C and SIGTERM during `minify SCRIPT`: one orderly stop within seconds, wherever the run is.

The first signal stops the run (minifier.workers.stop): a thread that reads the signal's wakeup
byte ends every process at once, even while the main thread is busy in torch; the main thread
gets a KeyboardInterrupt, writes report.json and exits. Should it not be out within GRACE
seconds, the thread writes what it can and ends the process. A second signal ends it at once.
Children run in process groups of their own, so a terminal's Ctrl-C reaches only minify.
"""
from __future__ import annotations

import contextlib
import os
import signal
import threading
from typing import Callable

from minifier.exit_codes import EXIT_INTERRUPTED, EXIT_TERMINATED
from minifier.workers.reap import kill_children
from minifier.workers.stop import STOP

REASONS = {signal.SIGINT: "interrupted", signal.SIGTERM: "terminated"}
GRACE = 4.0  # seconds the main thread has, after the first signal, to leave on its own


def exit_code() -> int:
    """130 for Ctrl-C, 143 for SIGTERM (128 + the signal, as a shell says)."""
    return EXIT_TERMINATED if STOP.reason == "terminated" else EXIT_INTERRUPTED


class Signals:
    """Installed around one run (`with Signals(last_words):`); `last_words` writes report.json
    and prints the line, if the main thread could not."""

    def __init__(self, last_words: Callable[[], None]):
        self.last_words = last_words
        self.seen = 0  # signals the main thread's handler saw
        self.previous: dict = {}
        self.wakeup: tuple[int, int] | None = None
        self.old_fd = -1
        self.timer: threading.Timer | None = None

    def __enter__(self) -> "Signals":
        if threading.current_thread() is not threading.main_thread():
            return self
        self.previous = {sig: signal.signal(sig, self._handler) for sig in REASONS}
        read, write = os.pipe()
        os.set_blocking(write, False)
        self.wakeup = (read, write)
        self.old_fd = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        threading.Thread(target=self._watch, args=(read,), daemon=True, name="minify-signals").start()
        return self

    def __exit__(self, *exc) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if self.wakeup is None:
            return
        signal.set_wakeup_fd(self.old_fd)
        for sig, handler in self.previous.items():
            signal.signal(sig, handler)
        os.close(self.wakeup[1])  # the watching thread reads its end and leaves

    def _handler(self, signum: int, frame) -> None:
        """The main thread's: the first signal stops the run and unwinds it; a second ends it."""
        self.seen += 1
        if self.seen > 1:
            self._exit_now()
        STOP.request(REASONS.get(signum, "interrupted"))
        raise KeyboardInterrupt

    def _watch(self, read: int) -> None:
        """At the signal itself: stop the run (its processes ended now) and start the grace clock."""
        count = 0
        with contextlib.suppress(OSError):
            while data := os.read(read, 64):
                for signum in data:
                    if signum not in REASONS:
                        continue
                    count += 1
                    if count > 1:
                        self._exit_now()
                    STOP.request(REASONS[signum])
                    self.timer = threading.Timer(GRACE, self._late)
                    self.timer.daemon = True
                    self.timer.start()
        with contextlib.suppress(OSError):
            os.close(read)

    def _late(self) -> None:
        with contextlib.suppress(Exception):
            if not STOP.reported:
                self.last_words()
        self._exit_now()

    def _exit_now(self) -> None:
        """Leave now: what is still running of ours is ended first."""
        with contextlib.suppress(Exception):
            kill_children()
        os._exit(exit_code())
