"""A watcher bound to one workspace's timeline: its drifts recorded with `trigger: watch`."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gitckpt.core.errors import GitckptError
from gitckpt.engine.records import DriftResult
from gitckpt.engine.timeline import Timeline
from gitckpt.engine.watch import PollingSource, Settings, Source, WatchdogSource, Watcher


@dataclass
class WatchSession:
    """A watcher bound to one workspace: `run()` blocks until `stop()` (from any thread)."""

    root: Path
    task: str
    watcher: Watcher

    def run(self) -> None:
        self.watcher.run()

    def stop(self) -> None:
        self.watcher.stop()


def start(tl: Timeline, task: str | None, on_drift: Callable[[DriftResult], None] | None = None,
          settings: Settings | None = None, source: Source | None = None,
          clock: Callable[[], float] = time.monotonic) -> WatchSession:
    """Start watching `tl`'s workspace for `task` (the active one if None); each drift is
    passed to `on_drift`. The event source has started on return."""
    tid = tl.resolve(task)
    settings = settings or Settings.from_env()

    first = [True]

    def capture_once(partial: bool) -> DriftResult:
        # The first capture, as the watcher starts, leaves alone a change written within the
        # quiet period: a tool call of the session that starts may be writing it, and its
        # hook attributes it. It is captured after the quiet period if no hook took it.
        settled = settings.quiet if first[0] else None
        first[0] = False
        result = tl.capture("watch", task, partial=partial, settled=settled)
        if result.recorded and on_drift is not None:
            on_drift(result)
        elif settled is not None and result.changes:
            watcher.hint()
        return result

    watcher = Watcher(capture_once, settings, clock,
                      fallback=lambda: PollingSource(settings.poll))
    store = tl.store
    store.prefer_low_memory()
    if source is None:
        try:
            store.state.ensure()  # the sync cookies' folder (journal.py)
            cookies = str(store.state_dir)
        except (OSError, GitckptError):
            cookies = None
        source = WatchdogSource(str(store.root), store.private, cookies)
    watcher.start(source)
    return WatchSession(store.root, tid, watcher)
