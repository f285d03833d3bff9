"""Writes inside the workspace that never leave it: every path is walked from the root by
directory descriptors that refuse symlinks, and files are replaced by an exclusive temporary
file and a rename.

Contract: nothing here follows a symlink, writes outside the root, or touches a name other
than the one it was asked to change and its own temporary files.
"""

from __future__ import annotations

import errno
import os
import stat

from gitckpt.core import atomic

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class Blocked(Exception):
    """A path cannot be written; `reason` says why in words for the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Missing(Blocked):
    """A folder on the path does not exist (and was not to be created)."""


def _why(e: OSError) -> str:
    return e.strerror or str(e)


class Workdir:
    """Descriptor-relative operations below one root folder. Use as a context manager."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._fds: dict[bytes, int] = {b"": os.open(root, _DIR_FLAGS)}

    def __enter__(self) -> Workdir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._fds.values():
            os.close(fd)
        self._fds.clear()

    def _forget(self, folder: bytes) -> None:
        """Close the descriptors of `folder` and below (it was removed or replaced)."""
        for key in [k for k in self._fds if k == folder or k.startswith(folder + b"/")]:
            if key:
                os.close(self._fds.pop(key))

    def folder(self, rel: bytes, create: bool = False) -> int:
        """A descriptor of folder `rel` (b"" is the root); Blocked if a component is a
        symlink or not a folder, or (without `create`) does not exist."""
        fd = self._fds.get(rel)
        if fd is not None:
            return fd
        parent, _, name = rel.rpartition(b"/")
        pfd = self.folder(parent, create)
        try:
            fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
        except FileNotFoundError:
            if not create:
                raise Missing(f"folder {os.fsdecode(rel)} is missing") from None
            try:
                os.mkdir(name, 0o777, dir_fd=pfd)
            except OSError as e:
                raise Blocked(f"cannot create folder {os.fsdecode(rel)}: {_why(e)}") from e
            fd = os.open(name, _DIR_FLAGS, dir_fd=pfd)
        except OSError as e:
            if e.errno in (errno.ELOOP, errno.ENOTDIR):
                kind = "a symlink" if _is_link(name, pfd) else "not a folder"
                raise Blocked(f"{os.fsdecode(rel)} is {kind}; not written through") from e
            raise Blocked(f"cannot open folder {os.fsdecode(rel)}: {_why(e)}") from e
        self._fds[rel] = fd
        return fd

    def lstat(self, rel: bytes) -> os.stat_result | None:
        parent, _, name = rel.rpartition(b"/")
        try:
            return os.stat(name, dir_fd=self.folder(parent), follow_symlinks=False)
        except (OSError, Blocked):
            return None  # missing, or unreachable: writing there fails and says why

    def write(self, rel: bytes, data: bytes, *, executable: bool = False,
              symlink: bool = False) -> None:
        """Replace `rel` by a file holding `data` (or a symlink to `data`), creating folders.

        The content goes to a new temporary name in the same folder, created exclusively, and
        is renamed over `rel`; a folder at `rel` is Blocked (remove it first). An existing
        file keeps its permission bits except the executable bit, which follows `executable`.
        """
        parent, _, name = rel.rpartition(b"/")
        fd = self.folder(parent, create=True)
        old = _lstat(name, fd)
        if old is not None and stat.S_ISDIR(old.st_mode):
            raise Blocked("a folder is in the way")
        keep = None
        if old is not None and stat.S_ISREG(old.st_mode):
            bits = _exec_bits(stat.S_IMODE(old.st_mode), executable)
            keep = lambda out: os.fchmod(out, bits)  # noqa: E731
        try:
            if symlink:
                tmp = self._link(fd, data)
                try:
                    os.rename(tmp, name, src_dir_fd=fd, dst_dir_fd=fd)
                except OSError:
                    _unlink_quietly(tmp, fd)
                    raise
            else:
                # not fsynced: the safety copy taken before is what survives a crash
                atomic.replace(name, data, dir_fd=fd, mode=0o777 if executable else 0o666,
                               sync=False, prefix=b".gitckpt-", before_rename=keep)
        except OSError as e:
            raise Blocked(f"cannot write: {_why(e)}") from e

    def _link(self, fd: int, link_target: bytes) -> bytes:
        """A symlink to `link_target` at a fresh name in folder `fd`."""
        for _ in range(100):
            tmp = b".gitckpt-" + os.urandom(8).hex().encode() + b".tmp"
            try:
                os.symlink(link_target, tmp, dir_fd=fd)
                return tmp
            except FileExistsError:
                continue
            except (OSError, ValueError) as e:
                raise Blocked(f"cannot create the symlink: {e}") from e
        raise Blocked("no free temporary name")  # pragma: no cover

    def set_executable(self, rel: bytes, executable: bool) -> None:
        """Flip the executable bit of the regular file `rel` (never through a symlink)."""
        parent, _, name = rel.rpartition(b"/")
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC,
                         dir_fd=self.folder(parent))
        except OSError as e:
            raise Blocked(f"cannot open: {_why(e)}") from e
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise Blocked("not a regular file any more")
            os.fchmod(fd, _exec_bits(stat.S_IMODE(st.st_mode), executable))
        except OSError as e:
            raise Blocked(f"cannot change mode: {_why(e)}") from e
        finally:
            os.close(fd)

    def remove(self, rel: bytes) -> None:
        """Delete the file or symlink `rel` (a missing one is fine; a folder is Blocked)."""
        parent, _, name = rel.rpartition(b"/")
        try:
            fd = self.folder(parent)
        except Blocked:
            return  # the folder is gone, or a symlink now: nothing of ours is there
        try:
            os.unlink(name, dir_fd=fd)
        except FileNotFoundError:
            pass
        except IsADirectoryError as e:
            raise Blocked("a folder is in the way") from e
        except OSError as e:
            if e.errno == errno.EPERM and _is_dir(name, fd):
                raise Blocked("a folder is in the way") from e
            raise Blocked(f"cannot delete: {_why(e)}") from e

    def remove_empty_folder(self, rel: bytes) -> bool:
        """Remove folder `rel` if it is empty; True if it is gone."""
        parent, _, name = rel.rpartition(b"/")
        try:
            fd = self.folder(parent)
        except Blocked:
            return False
        self._forget(rel)
        try:
            os.rmdir(name, dir_fd=fd)
            return True
        except FileNotFoundError:
            return True
        except OSError:
            return False


def _exec_bits(mode: int, executable: bool) -> int:
    """`mode` with x set wherever r is (as git checks out 755 from 644), or with no x."""
    return mode | (mode & 0o444) >> 2 if executable else mode & ~0o111


def _lstat(name: bytes, fd: int) -> os.stat_result | None:
    try:
        return os.stat(name, dir_fd=fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise Blocked(f"cannot look at it: {_why(e)}") from e


def _is_link(name: bytes, fd: int) -> bool:
    st = _lstat(name, fd)
    return st is not None and stat.S_ISLNK(st.st_mode)


def _is_dir(name: bytes, fd: int) -> bool:
    st = _lstat(name, fd)
    return st is not None and stat.S_ISDIR(st.st_mode)


def _unlink_quietly(name: bytes, fd: int) -> None:
    try:
        os.unlink(name, dir_fd=fd)
    except OSError:
        pass
