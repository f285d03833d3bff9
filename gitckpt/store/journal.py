"""What a running watcher saw change, so a snapshot in the same process visits only those
paths: trusted only after a full scan, and only up to a sync cookie.

Events are complete only while nothing was lost: the journal is trusted from the end of a full
scan that began with the event source healthy, until any doubt (a queue overflow, the source
stopping or failing, a folder it could not watch). Before trusting it, a snapshot synchronises
with the source as watchman does: it creates a uniquely named file (a cookie) in a folder
gitckpt owns inside the watched tree and waits until the event for it arrives, so every change
made before the snapshot began has been seen. A cookie that does not arrive within
`COOKIE_WAIT`, a source without a cookie folder, a snapshot that must be exact (a restore's,
a revert's), and every `verify_every` seconds (default 60) mean a full scan instead.

Some changes raise no event at all: writes through `mmap`, writes through a hard link from
outside the watched tree. Each narrowed snapshot therefore also re-checks the stat of a
rotating slice of the cached files (store/git_hinted.py), so such a change is found within
`RECHECK_SAVES` snapshots or `verify_every` seconds, whichever comes first. Snapshots through
one journal are serialised, and each starts from the cache the one before left.
"""

from __future__ import annotations

import itertools
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gitckpt.core.values import Skipped

log = logging.getLogger("gitckpt.store.journal")

COOKIE_WAIT = 0.5  # seconds a snapshot waits for its cookie's event before a full scan
VERIFY_EVERY = 60.0  # seconds between full verification scans (what events cannot show)
COOKIE = ".gitckpt-cookie-"
_counter = itertools.count()


@dataclass
class Grant:
    """A snapshot's permission: `paths` to visit (None: a full scan), under the journal."""

    paths: set[str] | None
    generation: int
    taken: set[str] = field(default_factory=set)
    skipped: tuple[Skipped, ...] = ()  # what the snapshot before left out


class Journal:
    """The changed paths of one workspace, relative to its root, as its event source saw them.

    `ignored(abs_path)` says which events are not the workspace's (the store's own folders).
    `cookie_dir` is a folder gitckpt owns inside the watched root, or None (then every
    snapshot is a full scan)."""

    def __init__(self, root: str, cookie_dir: str | None,
                 ignored: Callable[[str], bool] = lambda p: False,
                 verify_every: float = VERIFY_EVERY,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.root = root
        inside = cookie_dir is not None and os.path.commonpath(
            [os.path.realpath(cookie_dir), os.path.realpath(root)]) == os.path.realpath(root)
        self.cookie_dir = cookie_dir if inside else None
        self.ignored = ignored
        self.verify_every = verify_every
        self.clock = clock
        self.cond = threading.Condition()
        self.scan_lock = threading.Lock()  # one snapshot at a time through the journal
        self.dirty: set[str] = set()
        # what the last snapshot left out (sensitive, too large, ...)
        self.skipped: tuple[Skipped, ...] = ()
        self.healthy = False
        self.trusted = False
        self.looked = False  # a full scan through this journal has ended (its first look)
        self.generation = 0  # bumped on every doubt
        self.full_due = 0.0
        self.arrived: set[str] = set()
        self.counts = {"hinted": 0, "full": 0}  # snapshots of each kind (logs, tests)
        #: Workspace-relative folders no event watch covers, and the source's way to find
        #: them (called after each full scan): every snapshot visits them.
        self.unwatched: set[str] = set()
        self.probe: Callable[[], set[str]] | None = None

    # -- the event source's side (its thread) --------------------------------------------------

    def started(self) -> None:
        with self.cond:
            self.healthy = True
            self.generation += 1

    def lost(self, why: str) -> None:
        """Events may be missing: nothing is trusted until the next full scan."""
        with self.cond:
            if self.trusted:
                log.info("watcher events not trusted until the next full scan: %s", why)
            self.healthy = self.healthy and why != "stopped"
            self.trusted = False
            self.generation += 1
            self.cond.notify_all()

    def saw(self, paths: Iterable[str]) -> bool:
        """Take one event's absolute paths; True if one of them is the workspace's."""
        mine = False
        with self.cond:
            for path in paths:
                folder, name = os.path.split(path)
                if name.startswith(COOKIE) and self._cookie_folder(folder):
                    self.arrived.add(name)
                    self.cond.notify_all()
                    continue
                rel = os.path.relpath(path, self.root).replace(os.sep, "/")
                parts = rel.split("/")
                if ".git" in parts[1:]:  # inside a nested repository's own folder: the
                    rel = "/".join(parts[:parts.index(".git", 1)])  # folder may be one now
                    path = os.path.join(self.root, rel)
                if self.ignored(path):
                    continue
                mine = True
                self.dirty.add("" if rel == "." else rel)
        return mine

    def _cookie_folder(self, folder: str) -> bool:
        """Only a cookie in gitckpt's own folder is ours (a user's file may bear the name)."""
        return self.cookie_dir is not None and (
            os.path.normpath(folder) == os.path.normpath(self.cookie_dir)
            or os.path.realpath(folder) == os.path.realpath(self.cookie_dir))

    # -- the snapshot's side ---------------------------------------------------------------------

    def begin(self, full: bool = False) -> Grant:
        """Wait for the source to catch up with now, then say what to visit (`full`: nothing
        narrower than the whole workspace, for a snapshot that must be exact)."""
        self.scan_lock.acquire()
        try:
            synced = self._sync()
            with self.cond:
                full = full or not (synced and self.trusted) or self.clock() >= self.full_due \
                    or "" in self.dirty  # the root itself changed (moved, replaced)
                taken, self.dirty = self.dirty, set()
                # folders no watch covers are looked at by every snapshot, as a poll would
                paths = None if full else taken | self.unwatched
                self.counts["full" if full else "hinted"] += 1
                return Grant(paths, self.generation if synced and self.healthy else -1, taken,
                             self.skipped)
        except BaseException:
            self.scan_lock.release()
            raise

    def done(self, grant: Grant, ok: bool, skipped: tuple[Skipped, ...] = ()) -> None:
        """After the snapshot of `grant`: on success, `skipped` is what it left out of its
        tree; a full scan makes the journal trusted if no doubt arose since it began. On
        failure its paths are kept for the next one."""
        try:
            with self.cond:
                if not ok:
                    self.dirty |= grant.taken
                    return
                self.skipped = tuple(skipped)
                if grant.paths is None:
                    self.looked = True
                    self.trusted = grant.generation == self.generation and self.healthy
                    self.full_due = self.clock() + self.verify_every
            if ok and grant.paths is None and self.probe is not None:
                self._probe()
        finally:
            self.scan_lock.release()

    def _probe(self) -> None:
        """After a full scan: which folders the event source does not watch (it could not:
        an unreadable folder, the watch limit reached; watchdog says nothing of either)."""
        try:
            found = self.probe() if self.probe is not None else set()
        except Exception:  # a probe that cannot run says nothing: the verification scans go on
            log.debug("watch probe failed", exc_info=True)
            return
        with self.cond:
            if found and found != self.unwatched:
                log.info("%d folder(s) not watched (e.g. %s): looked at by every snapshot",
                         len(found), sorted(found)[0])
            self.unwatched = found

    def full_due_now(self) -> bool:
        with self.cond:
            return self.trusted and self.clock() >= self.full_due

    def _sync(self) -> bool:
        """Create a cookie and wait for its event: True once every earlier change was seen."""
        if self.cookie_dir is None or not self.healthy:
            return False
        name = f"{COOKIE}{os.getpid()}-{next(_counter)}"
        path = os.path.join(self.cookie_dir, name)
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
            os.close(fd)
        except OSError as e:
            log.info("no sync cookie in %s: %s", self.cookie_dir, e.strerror or e)
            return False
        try:
            deadline = time.monotonic() + COOKIE_WAIT
            with self.cond:
                while name not in self.arrived:
                    left = deadline - time.monotonic()
                    if left <= 0 or not self.healthy:
                        log.info("the sync cookie did not arrive: a full scan")
                        return False
                    self.cond.wait(left)
                self.arrived.discard(name)
                return True
        finally:
            try:
                os.unlink(path)
            except OSError:
                pass


_journals: dict[str, Journal] = {}
_registry = threading.Lock()


def register(journal: Journal) -> None:
    with _registry:
        _journals[os.path.realpath(journal.root)] = journal


def unregister(journal: Journal) -> None:
    with _registry:
        key = os.path.realpath(journal.root)
        if _journals.get(key) is journal:
            del _journals[key]


def for_root(root: str) -> Journal | None:
    """The journal of a watcher running in this process on workspace `root`, if any."""
    with _registry:
        return _journals.get(os.path.realpath(root))


def lose_all(why: str) -> None:
    with _registry:
        journals = list(_journals.values())
    for j in journals:
        j.lost(why)
