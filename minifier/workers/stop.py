"""The run's one stop: Ctrl-C, SIGTERM or --max-time, seen the same way everywhere.

A stop is requested once. Whatever holds processes registers how to end them (`on_stop`), and
they are ended at the request, before anything reads their answers: the pool then knows that a
worker that died did so because of the stop, and raises `Cancelled` instead of answering. So no
answer of work killed by a stop is cached, checkpointed or judged (it would read as a crash with
SIGKILL, or as a repro that did not reproduce). Children of minify run in process groups of their
own (the capture's, the zygote's), so a terminal's Ctrl-C reaches only minify, which ends them.
"""
from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable


class Cancelled(KeyboardInterrupt):
    """Work the stop cancelled: its answer, if any, is not an answer. A KeyboardInterrupt, so that
    no `except Exception` on its way takes it for a failure of the work."""


class Stop:
    """Why the run stops (None while it goes on), when it was asked, and what ends its processes."""

    def __init__(self):
        self.reason: str | None = None  # interrupted (SIGINT), terminated (SIGTERM), max-time
        self.at: float | None = None  # time.monotonic() of the request
        self.lock = threading.Lock()
        self.enders: dict[int, Callable[[], None]] = {}
        self.next_key = 0
        self.where = ""  # the run's last progress step: where it stopped
        self.reported = False  # report.json of the stopped run is written

    @property
    def stopped(self) -> bool:
        return self.reason is not None

    def reset(self) -> None:
        """A new run in this process (tests run several)."""
        with self.lock:
            self.reason, self.at, self.enders, self.where, self.reported = None, None, {}, "", False

    def on_stop(self, end: Callable[[], None]) -> int:
        """Call `end` at the stop (at once if the run stopped already); a key for `forget`. `end`
        must not wait for anything: it may run on the thread that saw the signal."""
        with self.lock:
            key, self.next_key = self.next_key, self.next_key + 1
            if self.reason is None:
                self.enders[key] = end
                return key
        with contextlib.suppress(Exception):
            end()
        return key

    def forget(self, key: int) -> None:
        with self.lock:
            self.enders.pop(key, None)

    def request(self, reason: str) -> bool:
        """Stop the run: every registered ender runs once. True for the first request."""
        with self.lock:
            if self.reason is not None:
                return False
            self.reason, self.at = reason, time.monotonic()
            enders, self.enders = list(self.enders.values()), {}
        for end in enders:
            with contextlib.suppress(Exception):
                end()
        return True

    def check(self) -> None:
        """Raise Cancelled once the run is stopping."""
        if self.reason is not None:
            raise Cancelled(self.reason)


STOP = Stop()  # one run per process at a time: `minify`'s
