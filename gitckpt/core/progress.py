"""Progress of long work: deep code counts what it did on a `Meter`, and the front end that
installed a sink (a bar on a terminal's stderr, MCP progress notifications) hears of it, only
once the work has taken more than a second and then at most ten times a second. Without a
sink a meter costs one context-variable read."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass


@dataclass(frozen=True)
class Report:
    what: str  # "Scanning files", "Writing the package", ...
    done: int
    total: int | None  # an estimate where the work cannot know it (a first scan)
    unit: str  # files | objects | bytes
    final: bool = False  # the last report of this meter

    def message(self) -> str:
        if self.unit == "bytes":
            done = f"{self.done / 1e6:,.1f} MB"
            total = f" of {self.total / 1e6:,.1f} MB" if self.total else ""
        else:
            done = f"{self.done:,}"
            total = f" of ~{self.total:,}" if self.total else ""
            done += "" if total else f" {self.unit}"
            total += f" {self.unit}" if total else ""
        return f"{self.what}: {done}{total}"


Sink = Callable[[Report], None]
_SINK: ContextVar[Sink | None] = ContextVar("gitckpt_progress", default=None)


def after() -> float:
    """GITCKPT_PROGRESS_AFTER: seconds of work before progress is shown (default 1)."""
    try:
        return max(0.0, float(os.environ.get("GITCKPT_PROGRESS_AFTER", "1")))
    except ValueError:
        return 1.0


@contextmanager
def reporting(sink: Sink | None) -> Iterator[None]:
    """Meters made inside report to `sink` (None: to nobody)."""
    token = _SINK.set(sink)
    try:
        yield
    finally:
        _SINK.reset(token)


class Meter:
    """Counts one piece of work; `close()` (or the `with` block's end) ends it.

    `total` may be a function that estimates it (a walk, an index read): it is called once,
    when the first report is sent, so work that ends within its second never pays for it."""

    def __init__(self, what: str, unit: str = "files",
                 total: int | Callable[[], int | None] | None = None) -> None:
        self.sink = _SINK.get()
        self.what, self.unit = what, unit
        self.total: int | None = None
        self._estimate = total if callable(total) else None
        if not callable(total):
            self.total = total
        self.done = 0
        self.start = time.monotonic()
        self.wait = after()
        self.last = 0.0
        self.shown = False

    def __enter__(self) -> Meter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def advance(self, n: int = 1) -> None:
        self.done += n
        if self.sink is None:
            return
        now = time.monotonic()
        if now - self.start < self.wait or now - self.last < 0.1:
            return
        self.last = now
        if self._estimate is not None:
            estimate, self._estimate = self._estimate, None
            self.total = estimate()
        self.shown = True
        total = self.total if self.total is None or self.total >= self.done else None
        self.sink(Report(self.what, self.done, total, self.unit))

    def tick(self, _path: str = "") -> None:
        """`advance(1)`, shaped as a scan's per-path callback (values.Progress)."""
        self.advance(1)

    def close(self) -> None:
        if self.sink is not None and self.shown:
            self.shown = False
            # the work is done: whatever the estimate said, this is all of it
            self.sink(Report(self.what, self.done, self.done, self.unit, final=True))


def active() -> bool:
    """True if a front end listens: callers may then spend a little on an estimate."""
    return _SINK.get() is not None
