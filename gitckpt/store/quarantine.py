"""A quarantine for fetched objects, as `git receive-pack` keeps one: a temporary object
folder inside the store's objects folder that git fetches into (GIT_OBJECT_DIRECTORY, with
the store's objects as GIT_ALTERNATE_OBJECT_DIRECTORIES), read here while the checks run, and
moved into the store only once every check passed. A refused fetch removes it whole, so the
store gains no object; a killed one leaves only the folder, which the next fetch (or
`gitckpt doctor --fix`) removes once no process holds its lock.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from gitckpt.core.errors import CHECK_STORE, StoreCorrupt, StoreNotWritable
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Commit, TreeEntry, decode_commit, decode_tree
from gitckpt.store.base import Store
from gitckpt.store.files import fsync_dir, read_loose
from gitckpt.store.git.loose import loose_size
from gitckpt.store.packs.read import Packs

try:
    import fcntl
except ImportError:  # no flock: a folder is a left-over for its age alone
    fcntl = None  # type: ignore[assignment]

PREFIX = "incoming-gitckpt-"
_LOCK = ".lock"  # <folder>.lock beside each folder, made and locked before the folder
# what a pack is made of, the index last: git sees a pack once its index is in place
_PACK_PARTS = (".pack", ".rev", ".bitmap", ".promisor", ".idx")


class Quarantine:
    """The objects of one fetch, until `admit` moves them into `store` or the context ends
    (then they are deleted). Reads see the quarantine first, then the store.

    The folder's lock file is created and locked (flock) before the folder exists, and
    removed after it: a folder whose lock nobody holds, or that has none, is a killed
    fetch's."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.objects = Path(store.objects_folder)
        self.path: Path | None = None
        self._lock_fd: int | None = None

    def __enter__(self) -> Quarantine:
        try:
            while self.path is None:
                name = PREFIX + os.urandom(8).hex()
                fd = os.open(self.objects / (name + _LOCK), os.O_RDWR | os.O_CREAT | os.O_EXCL
                             | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
                if fcntl is not None:
                    fcntl.flock(fd, fcntl.LOCK_EX)  # only a sweep's probe holds it, briefly
                if os.fstat(fd).st_nlink == 0:  # that sweep took it for a left-over
                    os.close(fd)
                    continue
                self._lock_fd, self.path = fd, self.objects / name
            self.path.mkdir(0o700)
            (self.path / "pack").mkdir()
        except OSError as e:
            self._remove()
            raise StoreNotWritable(f"Cannot write to {self.objects}: {e.strerror}.",
                                   "Check the permissions and free space of the store.") from e
        self._packs = Packs(str(self.path))
        return self

    def __exit__(self, *exc: object) -> None:
        self._remove()

    def _remove(self) -> None:
        if self.path is not None:  # the folder first: while it exists, its lock is held
            shutil.rmtree(self.path, ignore_errors=True)
            with contextlib.suppress(OSError):
                os.unlink(str(self.path) + _LOCK)
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    @property
    def env(self) -> dict[str, str]:
        """What makes git write its objects here (and refuse to update any ref)."""
        assert self.path is not None
        return {"GIT_OBJECT_DIRECTORY": str(self.path),
                "GIT_ALTERNATE_OBJECT_DIRECTORIES": str(self.objects),
                "GIT_QUARANTINE_PATH": str(self.path)}

    # -- reading: the quarantine first, then the store --------------------------------------

    def _loose(self, oid: str) -> Path:
        assert self.path is not None
        return self.path / oid[:2] / oid[2:]

    def _read_here(self, oid: str) -> tuple[str, bytes] | None:
        path = self._loose(oid)
        if path.is_file():
            return read_loose(path, ObjectId(oid))
        return self._packs.read(oid, self._base)

    def _base(self, oid: str) -> tuple[str, bytes] | None:
        """A delta's base named by id: loose here, or in the store."""
        path = self._loose(oid)
        if path.is_file():
            return read_loose(path, ObjectId(oid))
        return self.store.read_object(ObjectId(oid)) if self.store.has_object(
            ObjectId(oid)) else None

    def read_object(self, oid: ObjectId) -> tuple[str, bytes]:
        found = self._read_here(oid)
        return found if found is not None else self.store.read_object(oid)

    def has_object(self, oid: ObjectId) -> bool:
        return (self._loose(oid).is_file() or self._packs.has(oid)
                or self.store.has_object(oid))

    def object_size(self, oid: ObjectId) -> int:
        """As `Store.object_size`, for the quarantine's objects and the store's."""
        try:
            size = loose_size(self._loose(oid))
        except ValueError as e:
            raise StoreCorrupt(f"Fetched object {oid} is corrupt ({e})", CHECK_STORE) from e
        if size is None:
            size = self._packs.size(oid)
        return size if size is not None else self.store.object_size(oid)

    def _read(self, oid: ObjectId, kind: str) -> bytes:
        found, body = self.read_object(oid)
        if found != kind:
            raise StoreCorrupt(f"Object {oid} is a {found}, not a {kind}", CHECK_STORE)
        return body

    def read_commit(self, oid: ObjectId) -> Commit:
        return decode_commit(oid, self._read(oid, "commit"))

    def read_tree(self, oid: ObjectId) -> list[TreeEntry]:
        try:
            return decode_tree(self._read(oid, "tree"))
        except ValueError as e:
            raise StoreCorrupt(f"Tree {oid} is malformed ({e})", CHECK_STORE) from e

    def read_blob(self, oid: ObjectId) -> bytes:
        return self._read(oid, "blob")

    # -- admitting ---------------------------------------------------------------------------

    def admit(self) -> int:
        """Move every object of the quarantine into the store (loose objects, then each pack
        with its index last), so that each is complete where git finds it; how many files
        were moved. Call it only once every check passed, before any ref names them."""
        assert self.path is not None
        moved = 0
        folders: set[Path] = set()
        for sub in sorted(os.listdir(self.path)):
            if len(sub) != 2 or not (self.path / sub).is_dir():
                continue
            for name in os.listdir(self.path / sub):
                if name.startswith("tmp_"):
                    continue  # an unfinished write of git's: not an object
                moved += _move(self.path / sub / name, self.objects / sub / name, folders)
        packs = self.path / "pack"
        for idx in sorted(packs.glob("pack-*.idx")):
            for part in _PACK_PARTS:
                source = idx.with_suffix(part)
                if source.exists():
                    moved += _move(source, self.objects / "pack" / source.name, folders)
        for folder in folders:
            fsync_dir(folder)
        return moved


def _move(source: Path, dest: Path, folders: set[Path]) -> int:
    """Rename `source` to `dest` (same file system); an object already there stays."""
    if dest.exists():
        source.unlink()
        return 0
    dest.parent.mkdir(mode=0o755, exist_ok=True)
    os.rename(source, dest)
    folders.add(dest.parent)
    return 1


def stale(objects: Path | str) -> list[Path]:
    """The quarantine folders under `objects` (or lone lock files) that no running fetch
    holds: left by a killed one. `remove` takes each away safely."""
    try:
        names = {n.removesuffix(_LOCK) for n in os.listdir(objects) if n.startswith(PREFIX)}
    except OSError:
        return []
    found = []
    for name in sorted(names):
        path = Path(objects) / name
        with _probe(path) as free:
            if free:
                found.append(path if os.path.lexists(path) else Path(str(path) + _LOCK))
    return found


@contextlib.contextmanager
def _probe(path: Path) -> Iterator[bool]:
    """True, with the lock of quarantine `path` held, if no fetch holds it (or it has no
    lock: the lock is made before the folder and removed after it)."""
    try:
        fd = os.open(str(path) + _LOCK, os.O_RDWR | os.O_CLOEXEC | os.O_NOFOLLOW)
    except FileNotFoundError:
        yield True
        return
    except OSError:
        yield False
        return
    try:
        if fcntl is None:  # no flock here: only what is a day old is a left-over
            yield time.time() - os.fstat(fd).st_mtime > 86400
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(fd)


def remove(path: Path) -> bool:
    """Remove the left-over quarantine `path` (a folder, or a lone lock file) if still no
    fetch holds it; True if it was removed."""
    base = Path(str(path).removesuffix(_LOCK))
    with _probe(base) as free:
        if free:
            shutil.rmtree(base, ignore_errors=True)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(str(base) + _LOCK)  # held: a fetch that opens it sees it unlinked
    return free


def sweep(objects: Path | str) -> int:
    """Remove the quarantine folders killed fetches left; how many."""
    return sum(remove(path) for path in stale(objects))
