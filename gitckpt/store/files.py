"""The plain-folder store's file primitives: durable writes and loose object reads."""

from __future__ import annotations

import errno
import os
import stat
import sys
import time
import zlib
from pathlib import Path
from typing import BinaryIO

from gitckpt.core import atomic
from gitckpt.core.errors import CHECK_STORE, StoreCorrupt
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import hash_object
from gitckpt.store.state import unsafe


def make_dir(path: Path, base: Path, checked: set[Path] | None = None) -> None:
    """Create the private folder `path` inside the store `base` (and its parents), making each
    new entry durable. Every component below `base` must be a real folder, never a symlink
    (StoreUnsafe); `checked` remembers folders already verified by this store."""
    if checked is not None and path in checked:
        return
    if path != base:
        if base not in path.parents:
            raise ValueError(f"{path} is not inside {base}")
        make_dir(path.parent, base, checked)
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            try:
                os.mkdir(path, 0o700)
            except FileExistsError:
                pass
            fsync_dir(path.parent)
            st = os.lstat(path)
        if not stat.S_ISDIR(st.st_mode):
            raise unsafe(path)
    if checked is not None:
        checked.add(path)


def fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_file(path: Path, data: bytes) -> None:
    """Atomically and durably replace `path` (core/atomic.py). The caller has checked the
    folder (`make_dir`)."""
    atomic.replace_path(path, data)


def syncfs(path: Path) -> bool:
    """Flush the whole file system holding `path` (Linux); False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        try:
            result: int = libc.syncfs(fd)  # a C int
            return result == 0
        finally:
            os.close(fd)
    except (OSError, AttributeError):
        return False


def read_loose(path: Path, oid: ObjectId) -> tuple[str, bytes]:
    """(kind, body) of the loose object file `path`, checked to hash to `oid`. No more is
    inflated than the header announces, so a small file cannot expand into memory."""
    try:
        raw = path.read_bytes()
        z = zlib.decompressobj()
        head = z.decompress(raw, _HEAD)
        header, nul, body = head.partition(b"\0")
        if not nul:
            raise ValueError("no object header")
        kind, size = _header(header)
        body += z.decompress(z.unconsumed_tail, size - len(body) + 1)
        extra = z.decompress(z.unconsumed_tail, 1)
    except FileNotFoundError as e:
        raise StoreCorrupt(f"Object {oid} is missing from {path.parent.parent.parent}",
                           CHECK_STORE) from e
    except (OSError, zlib.error, ValueError) as e:
        raise StoreCorrupt(f"Object {oid} ({path}) is corrupt ({e})", CHECK_STORE) from e
    if (extra or not z.eof or len(body) != size or kind not in ("blob", "tree", "commit")
            or hash_object(kind, body) != oid):
        raise StoreCorrupt(f"Object {oid} ({path}) is corrupt", CHECK_STORE)
    return kind, body


class FileChanging(OSError):
    """A file kept changing while it was read: no moment's content could be taken."""


#: Reads of a file that changes under them before it is left out as `changing`.
READ_TRIES = 3


_HEAD = 64  # bytes of inflated data that hold any object header ("commit 123...\0")


def _header(header: bytes) -> tuple[str, int]:
    kind, _, size = header.partition(b" ")
    if not size.isdigit() or len(size) > 20:
        raise ValueError("bad object header")
    return kind.decode("ascii", "replace"), int(size)


#: How long a file's times must stand still before its bytes are taken as one moment's: the
#: kernel stamps them when a write begins, before the bytes are copied in, so a file whose
#: times are newer may still be in the middle of a write.
SETTLED_NS = 100_000_000


def read_regular(path: str) -> bytes:
    """A regular file's bytes as they were at one moment, never through a link or into a fifo
    swapped in since the stat (OSError otherwise).

    A read is retried while it races a writer: the file's size, mtime or ctime moved during
    it, or fewer bytes came than its size. A file whose times are less than SETTLED_NS old
    (a write may be under way) is read again once they are, and its two reads must agree.
    FileChanging after READ_TRIES attempts, so no torn mix of two versions is stored (short
    of one write call that stalls for longer than SETTLED_NS in the middle of its copy)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise FileNotFoundError(path)
        for _ in range(READ_TRIES):
            started = time.time_ns()
            data, after = _read_once(f, fd)
            if len(data) != after.st_size or not _same_moment(before, after):
                before = after
                continue
            settled = max(after.st_mtime_ns, after.st_ctime_ns) + SETTLED_NS
            if settled <= started:
                return data  # its times were settled before this read began
            time.sleep(max(0, settled - time.time_ns()) / 1e9)
            again, last = _read_once(f, fd)
            if again == data and _same_moment(after, last):
                return data
            before = last
        raise FileChanging(errno.EAGAIN, "the file kept changing while it was read", path)


def _read_once(f: BinaryIO, fd: int) -> tuple[bytes, os.stat_result]:
    f.seek(0)
    data = f.read()
    return data, os.fstat(fd)


def _same_moment(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_size, a.st_mtime_ns, a.st_ctime_ns) == (b.st_size, b.st_mtime_ns, b.st_ctime_ns)
