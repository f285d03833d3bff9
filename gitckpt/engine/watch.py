"""The drift watcher: file-system events are hints; after a quiet period a snapshot decides.

Events only say "something may have changed". After `quiet` seconds without one, or at the
latest `max_wait` seconds after the first of a continuous burst (then the drift is `partial`),
the watcher calls its capture function, which snapshots and records a drift if the tree differs
from the tip. Events are never trusted to be complete (inotify drops them on overflow), so a
lost event costs at most a later capture, never a change: the snapshot sees everything.
With no events the watcher sleeps; it wakes only to check that its event source is alive.
Snapshots in the same process may visit only the paths the events named, through the
source's journal (journal.py), and only while nothing can have been lost.
"""

from __future__ import annotations

import ctypes
import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from gitckpt.core.errors import GitckptError, InvalidArgument, NoActiveTask, StoreBusy, TaskClosed
from gitckpt.core.switches import watch_enabled
from gitckpt.store import journal as journals
from gitckpt.store.journal import Journal

if TYPE_CHECKING:
    from watchdog.observers.api import BaseObserver

log = logging.getLogger("gitckpt.engine.watch")

Clock = Callable[[], float]
Hint = Callable[[], None]
_IGNORED_NAMES = (".git", ".gitckpt")
# Reads (ours included: a snapshot opens files) must not look like changes.
_READ_EVENTS = {"opened", "closed_no_write"}


@dataclass(frozen=True)
class Settings:
    """GITCKPT_QUIET, GITCKPT_MAX_WAIT, GITCKPT_POLL (seconds) and GITCKPT_WATCH."""

    quiet: float = 2.0
    max_wait: float = 30.0
    poll: float = 15.0
    enabled: bool = True

    @classmethod
    def from_env(cls) -> Settings:
        def seconds(name: str, default: float) -> float:
            raw = os.environ.get(name, "").strip()
            if not raw:
                return default
            try:
                value = float(raw)
            except ValueError:
                value = -1.0
            if not 0 < value < 86_400:
                raise InvalidArgument(f"{name}={raw!r} is not a number of seconds.",
                                      f"Use a positive number, for example {name}={default:g}.")
            return value

        return cls(seconds("GITCKPT_QUIET", 2.0), seconds("GITCKPT_MAX_WAIT", 30.0),
                   seconds("GITCKPT_POLL", 15.0), watch_enabled())


class Debouncer:
    """When to snapshot, from the times of hints alone. Not thread-safe (the Watcher locks)."""

    def __init__(self, quiet: float, max_wait: float) -> None:
        self.quiet = quiet
        self.max_wait = max_wait
        self.first: float | None = None
        self.last: float | None = None

    def hint(self, now: float) -> None:
        if self.first is None:
            self.first = now
        self.last = now

    def due(self) -> float | None:
        """The time the pending capture is due, or None when nothing is pending."""
        if self.first is None or self.last is None:
            return None
        return min(self.last + self.quiet, self.first + self.max_wait)

    def take(self, now: float) -> bool | None:
        """None if no capture is due at `now`; else whether it is partial (events were still
        arriving), and the pending state is cleared."""
        due = self.due()
        if due is None or now < due:
            return None
        partial = self.last is not None and now < self.last + self.quiet
        self.first = self.last = None
        return partial


class Watcher:
    """Runs captures on hints from an event source, with an injectable clock.

    `capture(partial)` records a drift if the workspace changed and returns what it did; it is
    called from the thread running `run()` (or from `step()` in tests) and never concurrently.
    """

    def __init__(self, capture: Callable[[bool], object], settings: Settings,
                 clock: Clock = time.monotonic,
                 fallback: Callable[[], Source] | None = None) -> None:
        self.capture = capture
        self.fallback = fallback  # the source to use when file events cannot be had
        self.settings = settings
        self.clock = clock
        self.debounce = Debouncer(settings.quiet, settings.max_wait)
        self.cond = threading.Condition()
        self.stopped = False
        self.mode = "idle"  # events | polling | idle
        self.source: Source | None = None

    def hint(self) -> None:
        """Something may have changed (thread-safe; called by event sources)."""
        with self.cond:
            self.debounce.hint(self.clock())
            self.cond.notify()

    def step(self) -> object | None:
        """Capture now if one is due; the capture's result, or None."""
        with self.cond:
            partial = self.debounce.take(self.clock())
        if partial is None:
            return None
        return self._capture(partial)

    def _capture(self, partial: bool) -> object | None:
        try:
            return self.capture(partial)
        except (NoActiveTask, TaskClosed):
            return None  # nothing to record into; the next task's init starts afresh
        except StoreBusy:
            self.hint()  # someone holds the lock for long: try again after a quiet period
            return None
        except GitckptError as e:
            log.warning("capture failed: %s (%s)", e.message, e.hint)
            return None
        except Exception:  # a watcher must outlive a bug in one capture
            log.exception("capture crashed")
            return None
        finally:
            release_memory()

    def start(self, source: Source) -> None:
        """Start `source`; if it cannot run (inotify limits, an unsupported file system),
        start the fallback (polling) instead and say so once in the log."""
        fallback = self.fallback
        try:
            with signals_to_main():
                source.start(self.hint)
            self.source, self.mode = source, "events"
        except OSError as e:
            if fallback is None:
                raise
            log.warning("file events unavailable (%s); polling every %gs instead",
                        e.strerror or e, self.settings.poll)
            self.source = fallback()
            with signals_to_main():
                self.source.start(self.hint)
            self.mode = "polling"

    def run(self) -> None:
        """Wait for due captures until `stop()`. Between events this sleeps; it wakes every
        `poll` seconds only to check that the event source is still alive.

        The first capture runs at once, not after the first event: it is the full scan that
        lets later captures trust the events (journal.py), done while the session starts
        rather than in the first tool call's hook (which would wait behind it), and it records
        what changed while nothing watched (its capture function may leave a change written
        just now to that change's hook: engine/session.py)."""
        if not self.stopped:
            self._capture(False)
        while True:
            with self.cond:
                if self.stopped:
                    break
                due = self.debounce.due()
                timeout = self.settings.poll if due is None else max(0.0, due - self.clock())
                self.cond.wait(timeout)
                if self.stopped:
                    break
            self.step()
            if self.source is not None and self.source.due():
                self.hint()  # the periodic full scan that checks the journal (journal.py)
            fallback = self.fallback
            if self.source is not None and not self.source.alive() and fallback is not None:
                log.warning("file events stopped; polling every %gs instead",
                            self.settings.poll)
                self.source.stop()
                self.source, self.mode = fallback(), "polling"
                with signals_to_main():
                    self.source.start(self.hint)
                self.hint()  # whatever happened while events were down
        if self.source is not None:
            self.source.stop()

    def stop(self) -> None:
        with self.cond:
            self.stopped = True
            self.cond.notify()


_MAIN_SIGNALS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def signals_to_main() -> Iterator[None]:
    """Threads started inside block SIGINT and SIGTERM, so the kernel hands those to the main
    thread. A signal taken by another thread only sets a flag the main thread reads when its
    current wait ends (up to `poll` seconds later); one it takes itself interrupts the wait.
    A no-op off the main thread or where pthread_sigmask is missing."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
            signal, "pthread_sigmask"):
        yield
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _MAIN_SIGNALS)
    try:
        yield  # threads inherit the mask of the thread that starts them
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextmanager
def stop_signals_waited() -> Iterator[bool]:
    """Inside, SIGINT and SIGTERM are blocked in the calling (main) thread and so in every
    thread it starts, for `run_until_stopped`'s sigwait; the old mask is back on exit, with
    any stop request still pending consumed. Yields False where that cannot be done (no
    pthread_sigmask, or not the main thread): the caller then keeps ordinary handlers."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(
            signal, "pthread_sigmask"):
        yield False
        return
    old = signal.pthread_sigmask(signal.SIG_BLOCK, _MAIN_SIGNALS)
    try:
        yield True
    finally:
        while signal.sigtimedwait(_MAIN_SIGNALS, 0) is not None:
            pass  # already answered: the stop that ended the run, or the helper's wake-up
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


def run_until_stopped(run: Callable[[], None], stop: Callable[[], None],
                      grace: float = 5.0) -> None:
    """Run `run` in a helper thread while this thread (the main one, inside
    `stop_signals_waited`) waits for SIGINT or SIGTERM with sigwait, or for the helper's end;
    then `stop()`, and `grace` seconds for the helper to finish.

    sigwait takes a pending signal whichever thread the kernel chose, so no wait of ours
    (a condition, an event source's join) can delay a stop request. A helper that does not
    finish in time is left behind as a daemon thread, with every thread's stack in the log.
    An exception raised by `run` is raised here."""
    import faulthandler
    import sys

    main = threading.main_thread().ident
    assert main is not None  # the main thread has started: it runs this
    failure: list[BaseException] = []

    def body() -> None:
        try:
            run()
        except BaseException as e:  # handed to the main thread
            failure.append(e)
        finally:
            signal.pthread_kill(main, signal.SIGTERM)  # wakes the sigwait below

    helper = threading.Thread(target=body, name="gitckpt-watch", daemon=True)
    helper.start()
    signal.sigwait(_MAIN_SIGNALS)
    stop()
    helper.join(grace)
    if helper.is_alive():
        log.warning("the watcher did not stop within %gs; leaving it behind", grace)
        faulthandler.dump_traceback(sys.stderr, all_threads=True)
    if failure:
        raise failure[0]


def release_memory() -> None:
    """Give the memory a snapshot used back to the system (glibc keeps freed pages), so an
    idle watcher stays small. A no-op elsewhere."""
    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (OSError, AttributeError):
        pass


class Source:
    """Where hints come from."""

    def start(self, hint: Hint) -> None:  # OSError if it cannot run here
        raise NotImplementedError

    def due(self) -> bool:
        """True when a verification scan is due (sources that keep a journal)."""
        return False

    def alive(self) -> bool:
        return True

    def stop(self) -> None:
        pass


class PollingSource(Source):
    """A hint every `interval` seconds: the snapshot after it finds any change."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, hint: Hint) -> None:
        def loop() -> None:
            while not self._stop.wait(self.interval):
                hint()

        self._thread = threading.Thread(target=loop, name="gitckpt-poll", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()


def ignored(path: str, root: str, private: tuple[str, ...]) -> bool:
    """Events under `.git`, `.gitckpt` or the store are our own or git's: never hints."""
    rel = os.path.relpath(path, root)
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return True  # outside the root (a name like "..notes" is inside)
    parts = rel.replace(os.sep, "/").split("/")
    if any(p in _IGNORED_NAMES for p in parts):
        return True
    return any(rel == p or rel.startswith(p + "/") for p in private)


class WatchdogSource(Source):
    """inotify (or the platform's equivalent) through watchdog, recursively under `root`."""

    def __init__(self, root: str, private: tuple[str, ...] = (),
                 cookie_dir: str | None = None) -> None:
        self.root = root
        self.private = private
        self._observer: BaseObserver | None = None
        self._hint: Hint | None = None
        # What it sees, for snapshots in this process (see journal.py); `cookie_dir` is a
        # folder of gitckpt's inside `root` for the sync cookies.
        self.journal = Journal(root, cookie_dir, lambda p: ignored(p, root, private))
        self.journal.probe = lambda: unwatched(root, private)

    def start(self, hint: Hint) -> None:
        from watchdog import events as ev
        from watchdog.observers import Observer

        journal = self.journal
        self._hint = hint

        class Handler(ev.FileSystemEventHandler):
            def on_any_event(self, event: ev.FileSystemEvent) -> None:
                if event.event_type in _READ_EVENTS:
                    return
                paths = [os.fsdecode(event.src_path)]
                if getattr(event, "dest_path", ""):
                    paths.append(os.fsdecode(event.dest_path))
                if journal.saw(paths):
                    hint()

        observer = Observer()
        observer.daemon = True
        # Changes only: no open/close-without-write events (a snapshot reads every changed
        # file), and no close-after-write or folder-modified events, which repeat what these
        # say. Attribute events are changes: a chmod changes the executable bit a tree
        # records, and a new hard link (its link count) may be written through unseen.
        wanted = [ev.FileModifiedEvent, ev.FileCreatedEvent, ev.FileDeletedEvent,
                  ev.FileMovedEvent, ev.FileAttribEvent, ev.DirCreatedEvent,
                  ev.DirDeletedEvent, ev.DirMovedEvent, ev.DirAttribEvent]
        observer.schedule(Handler(), self.root, recursive=True, event_filter=wanted)
        _overflow_hints(hint)
        observer.start()  # OSError when inotify limits are reached
        self._observer = observer
        journal.started()
        journals.register(journal)

    def alive(self) -> bool:
        return self._observer is not None and self._observer.is_alive() and all(
            e.is_alive() for e in getattr(self._observer, "emitters", ()))

    def due(self) -> bool:
        return self.journal.full_due_now()

    def stop(self) -> None:
        self.journal.lost("stopped")
        journals.unregister(self.journal)
        if self._hint in _OverflowHint.hints:
            _OverflowHint.hints.remove(self._hint)
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)


class _OverflowHint(logging.Handler):
    """watchdog logs a queue overflow without telling the event handler: the warning itself
    becomes a hint to every running source, so the snapshot after the burst looks at all.
    Any warning of watchdog's (an overflow, a folder it could not watch) also means its
    events are no longer complete: no journal is trusted until its next full scan."""

    hints: ClassVar[list[Hint]] = []

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        journals.lose_all(message)
        if "overflow" in message.lower():
            for hint in list(self.hints):
                hint()


def _overflow_hints(hint: Hint) -> None:
    _OverflowHint.hints.append(hint)
    for name in ("watchdog.observers.inotify_c", "watchdog.observers.inotify"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, _OverflowHint) for h in logger.handlers):
            logger.addHandler(_OverflowHint())


def unwatched(root: str, private: tuple[str, ...] = ()) -> set[str]:
    """Folders under `root` (links not followed; `.git`, `.gitckpt` and `private` left out)
    that no inotify watch of this process covers, relative to `root`. Empty where the kernel
    does not list its watches (not Linux)."""
    watched = _watched_inodes()
    if watched is None:
        return set()
    out: set[str] = set()
    dev = os.lstat(root).st_dev
    key = (os.major(dev), os.minor(dev))
    stack = [("", root)]
    while stack:
        rel, path = stack.pop()
        try:
            with os.scandir(path) as it:
                entries = [e for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            continue  # unreadable: found as unwatched by its parent (a watch needs read)
        for e in entries:
            child = f"{rel}/{e.name}" if rel else e.name
            if e.name in _IGNORED_NAMES or ignored(e.path, root, private):
                continue
            if (*key, e.inode()) not in watched:
                out.add(child)  # and nothing below it is watched either
            else:
                stack.append((child, e.path))
    return out


def _watched_inodes() -> set[tuple[int, int, int]] | None:
    """(major, minor, inode) of every folder this process's inotify instances watch, from
    /proc/self/fdinfo; None where that cannot be read."""
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    found: set[tuple[int, int, int]] = set()
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as f:
                for line in f:
                    if line.startswith("inotify wd:"):
                        fields = dict(part.split(":", 1) for part in line.split()[1:4])
                        sdev, ino = int(fields["sdev"], 16), int(fields["ino"], 16)
                        found.add((sdev >> 20, sdev & 0xFFFFF, ino))
        except (OSError, ValueError, KeyError):
            continue
    return found
