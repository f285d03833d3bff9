"""The one way gitckpt replaces a file: a fresh temporary name beside it, written whole, made
durable, renamed over the name. A reader sees the old file or the new one, never a part."""

from __future__ import annotations

import os
from collections.abc import Callable

# Exclusive and never through a planted symlink: a name that exists (a file, a link) is
# refused and another is drawn.
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC


def replace(name: str | bytes, data: bytes, *, dir_fd: int, mode: int = 0o600,
            sync: bool = True, prefix: str | bytes | None = None,
            before_rename: Callable[[int], None] | None = None) -> None:
    """Replace `name` in the folder open as `dir_fd` by a file holding `data`.

    The temporary file is `.<name>.<random>.tmp` (or `<prefix><random>.tmp`) in the same
    folder, created with `mode` (less the umask). `before_rename(fd)` may adjust it (the
    permission bits a restored file keeps). With `sync`, the file and then the folder are
    fsynced, so the new content survives a crash once this returns; without, the rename is
    still atomic for readers (restored workspace files: the safety copy is the durable one).
    The rename replaces a symlink at `name` and never writes through it. On any failure the
    temporary file is removed and the error raised; `name` is as it was.
    """
    tmp, fd = _create(name, dir_fd, mode, prefix)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            if before_rename is not None:
                before_rename(fd)
            if sync:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=dir_fd)
        except OSError:
            pass
        raise
    if sync:
        sync_dir(dir_fd)


def replace_path(path: str | os.PathLike[str], data: bytes, *, mode: int = 0o600,
                 sync: bool = True, before_rename: Callable[[int], None] | None = None) -> None:
    """`replace` by path: the file's folder must exist (the caller has checked it)."""
    folder, name = os.path.split(os.fspath(path))
    dir_fd = os.open(folder or ".", _DIR)
    try:
        replace(name, data, dir_fd=dir_fd, mode=mode, sync=sync, before_rename=before_rename)
    finally:
        os.close(dir_fd)


def sync_dir(dir_fd: int) -> None:
    """Make a folder's entries durable; file systems that cannot (some network ones) are
    left as they are."""
    try:
        os.fsync(dir_fd)
    except OSError:
        pass


def _create(name: str | bytes, dir_fd: int, mode: int,
            prefix: str | bytes | None) -> tuple[str | bytes, int]:
    as_bytes = isinstance(name, bytes)
    if prefix is None:
        prefix = b"." + name + b"." if isinstance(name, bytes) else f".{name}."
    for _ in range(100):
        token = os.urandom(8).hex()
        if as_bytes:
            tmp: str | bytes = os.fsencode(prefix) + token.encode() + b".tmp"
        else:
            tmp = os.fsdecode(prefix) + token + ".tmp"
        try:
            return tmp, os.open(tmp, _NEW, mode, dir_fd=dir_fd)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {os.fsdecode(name)!r}")
