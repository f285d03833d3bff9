"""Lock files: an exclusive flock(2) on a file that stays in place, re-entrant within a
thread, waited for by other threads and processes; the lock filelock's FileLock takes on
Linux, so the two exclude each other.

Why not filelock itself: its import costs a process about 11 ms (some 30 modules), which a
hook pays on every tool call (a 150 ms budget); all we need of it is one flock. A filesystem
without flock (some FUSE mounts) gets filelock after all, at `<path>.soft`, with its soft
lock (all gitckpt processes there take that one).
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time
from typing import Any, ClassVar

#: How often a waiting acquire tries again (filelock's default too).
POLL = 0.05
_BUSY = frozenset({errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK})
_NO_FLOCK = frozenset({errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK})


class Timeout(Exception):
    """The lock was not free within the timeout."""

    def __init__(self, path: str) -> None:
        super().__init__(f"The file lock '{path}' could not be acquired.")
        self.path = path


class FileLock:
    """One lock file. `acquire` and `release` nest within a thread (a count); another
    thread's acquire waits on its own descriptor, as another process does. `shared(path)` is
    the one object a process keeps per path, so every caller nests in the same count."""

    _shared: ClassVar[dict[str, FileLock]] = {}
    _sharing: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, path: str, mode: int = 0o600) -> None:
        self.path, self.mode = path, mode
        self._mine = threading.local()  # this thread's descriptor and count
        self._fallback: Any = None  # filelock's lock where this filesystem has no flock

    @classmethod
    def shared(cls, path: str, mode: int = 0o600) -> FileLock:
        with cls._sharing:
            lock = cls._shared.get(path)
            if lock is None:
                lock = cls._shared[path] = cls(path, mode)
            return lock

    @property
    def is_locked(self) -> bool:
        """Whether this thread holds it."""
        return getattr(self._mine, "count", 0) > 0

    def acquire(self, timeout: float) -> None:
        """Hold the lock, trying every POLL seconds for `timeout` (0: once); Timeout if it
        stays busy; OSError if the file cannot be opened."""
        if self.is_locked:
            self._mine.count += 1
            return
        if self._fallback is None:
            deadline = time.monotonic() + timeout
            while True:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                             self.mode)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError as e:
                    os.close(fd)
                    if e.errno in _NO_FLOCK:
                        self._fall_back()
                        break
                    if e.errno not in _BUSY:
                        raise
                    if time.monotonic() >= deadline:
                        raise Timeout(self.path) from None
                    time.sleep(POLL)
                    continue
                self._mine.fd, self._mine.count = fd, 1
                return
        import filelock

        try:
            self._fallback.acquire(timeout=timeout)
        except filelock.Timeout:
            raise Timeout(self.path) from None
        self._mine.fd, self._mine.count = None, 1

    def level(self) -> int:
        """How many holds of this thread's are open (1: releasing now unlocks)."""
        return int(getattr(self._mine, "count", 0))

    def release(self) -> None:
        """Undo one acquire of this thread's; the last one unlocks (a no-op if not held)."""
        if not self.is_locked:
            return
        self._mine.count -= 1
        if self._mine.count:
            return
        fd, self._mine.fd = self._mine.fd, None
        if fd is None:
            self._fallback.release()
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _fall_back(self) -> None:
        import filelock

        # beside the file this module made and keeps: filelock's soft lock (a marker file with
        # its holder's pid, stale ones broken) must find its own path free
        self._fallback = filelock.FileLock(self.path + ".soft", mode=self.mode,
                                           thread_local=True)
