"""The one way gitckpt writes its small state files: never through a symlink, always atomic.

A store's state folder (active-task pointer, stat caches, restore marker, logs, config) may sit
in a folder someone else prepared (a downloaded `.gitckpt/`). Every component below the
trusted base is opened with `O_NOFOLLOW` through directory descriptors, so a planted symlink is
refused instead of followed; files are written as a random `O_EXCL|O_NOFOLLOW` temp file,
fsynced and renamed over the name (a rename replaces a symlink, never writes through it).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

from gitckpt.core import atomic
from gitckpt.core.errors import StoreBusy, StoreUnsafe

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_LINKED = (errno.ELOOP, errno.ENOTDIR, errno.EMLINK)


def open_dir(base: Path, parts: tuple[str, ...], *, create: bool) -> int:
    """A descriptor of `base/parts...`, each part opened without following a symlink (created
    0700 when `create`). StoreUnsafe names the first component that is a symlink; missing
    folders raise FileNotFoundError when not `create`."""
    fd = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    here = base
    try:
        for part in parts:
            here = here / part
            try:
                sub = os.open(part, _DIR, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(part, 0o700, dir_fd=fd)
                except FileExistsError:
                    pass
                os.fsync(fd)
                sub = os.open(part, _DIR, dir_fd=fd)
            except OSError as e:
                if e.errno in _LINKED:
                    raise unsafe(here) from e
                raise
            os.close(fd)
            fd = sub
    except BaseException:
        os.close(fd)
        raise
    return fd


def unsafe(path: Path) -> StoreUnsafe:
    """The error for `path` inside a store: a symlink, or a file where a folder must be."""
    if path.is_symlink():
        return StoreUnsafe(
            f"{path} is a symbolic link inside the checkpoint store; gitckpt does not write "
            "through it.",
            f"Remove the link {path} (`gitckpt doctor --fix` removes symlinks inside the "
            "store), then retry.")
    return StoreUnsafe(f"Cannot use {path}: a file is where gitckpt keeps a folder.",
                       f"Move {path} away, then retry.")


def not_a_file(path: Path) -> str | None:
    """What stands at `path` where gitckpt needs a plain file (the store's lock), in words:
    "a folder", "a named pipe (fifo)", "a socket", "a device file"; None for a regular file,
    nothing at all (made on first use), or a symlink (refused as one, see `unsafe`)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    import stat

    if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (fifo)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device file"


def lock_unusable(path: Path, what: str) -> StoreUnsafe:
    """The error for a lock path that is not a file (see `not_a_file`)."""
    return StoreUnsafe(f"The store's lock {path} is {what}, not a file: no write can take it.",
                       "`gitckpt doctor --fix` repairs it (an empty folder or a fifo is "
                       "removed, a folder with files in it is moved aside), then retry.")


class StateDir:
    """One state folder: `base/parts...`, where `base` is trusted (the store or git dir)."""

    def __init__(self, base: Path, *parts: str) -> None:
        self.base = base
        self.parts = parts
        self.path = base.joinpath(*parts)

    @contextmanager
    def _dir(self, create: bool) -> Iterator[int]:
        fd = open_dir(self.base, self.parts, create=create)
        try:
            yield fd
        finally:
            os.close(fd)

    def ensure(self) -> Path:
        """Create the folder (0700) if needed and check it; its path for libraries that write
        into it themselves (libgit2's private index)."""
        with self._dir(True):
            return self.path

    def read(self, name: str) -> bytes | None:
        """The bytes of `name`, or None if it (or the folder) does not exist."""
        try:
            with self._dir(False) as d:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=d)
        except FileNotFoundError:
            return None
        except OSError as e:
            if e.errno in _LINKED:
                raise unsafe(self.path / name) from e
            raise
        with os.fdopen(fd, "rb") as f:
            return f.read()

    def write(self, name: str, data: bytes) -> None:
        """Atomically replace `name` with `data` (mode 0600), durably (core/atomic.py)."""
        with self._dir(True) as d:
            atomic.replace(name, data, dir_fd=d)

    @contextmanager
    def locked(self, name: str, timeout: float) -> Iterator[None]:
        """Hold the lock file `name` in this folder (StoreBusy after `timeout` seconds): a
        small memory read and written by processes at once, apart from the store's lock,
        which a long scan may hold."""
        from gitckpt.store import flock

        self.ensure()
        lock = flock.FileLock(str(self.path / name))
        try:
            lock.acquire(timeout=timeout)
        except flock.Timeout as e:
            raise StoreBusy(str(self.path / name), timeout) from e
        try:
            yield
        finally:
            lock.release()

    def remove(self, name: str) -> None:
        """Remove `name` if it exists (a symlink is removed, not followed)."""
        try:
            with self._dir(False) as d:
                os.unlink(name, dir_fd=d)
        except FileNotFoundError:
            pass

    def exists(self, name: str) -> bool:
        try:
            with self._dir(False) as d:
                os.stat(name, dir_fd=d, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return True

    def open_log(self, name: str) -> TextIO:
        """`name` opened for appending text: never through a symlink, mode 0600. Text that is
        not UTF-8 (a file name's surrogates in a message) is written escaped, never refused."""
        with self._dir(True) as d:
            try:
                fd = os.open(name, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW
                             | os.O_CLOEXEC, 0o600, dir_fd=d)
            except OSError as e:
                if e.errno in _LINKED:
                    raise unsafe(self.path / name) from e
                raise
        os.fchmod(fd, 0o600)
        return os.fdopen(fd, "a", encoding="utf-8", errors="backslashreplace")

