"""Object writes held in memory until an operation knows it goes ahead (`Store.staging`), so
that an apply which is refused after its plan was computed has written nothing.

`Held` is the set of objects written while staging, by id. `HeldBackend` lends it to libgit2
as an object database backend, so a scan or a merge through libgit2 writes into it and reads
from it like any other object; objects already in the store are read from their own backends,
which a staging database holds as alternates (libgit2 never writes to an alternate).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pygit2
from pygit2.enums import ObjectType

_TYPES = {"blob": ObjectType.BLOB, "tree": ObjectType.TREE, "commit": ObjectType.COMMIT}
_KINDS = {int(v): k for k, v in _TYPES.items()}
_PRIORITY = 1000  # before every disk backend: libgit2 writes to the first that takes writes


class Held:
    """The objects written while staging: id (hex) -> (kind, body)."""

    def __init__(self) -> None:
        self.objects: dict[str, tuple[str, bytes]] = {}

    def add(self, oid: str, kind: str, body: bytes) -> None:
        self.objects.setdefault(oid, (kind, body))

    def get(self, oid: str) -> tuple[str, bytes] | None:
        return self.objects.get(oid)

    def __contains__(self, oid: object) -> bool:
        return oid in self.objects

    def __len__(self) -> int:
        return len(self.objects)


class HeldBackend(pygit2.OdbBackend):
    """`Held` as a libgit2 object database backend (a missing object is KeyError, which
    pygit2 reports to libgit2 as not found, so the next backend is asked).

    It answers `exists` for the objects of the store on disk (`disk`) too: libgit2 asks it
    before a write, as the first backend, and stops at a yes, so writing an object the store
    has already touches nothing (libgit2 would otherwise "freshen" its file: a new mtime)."""

    def __init__(self, held: Held, disk: pygit2.Odb) -> None:
        super().__init__()
        self.held = held
        self.disk = disk

    def _find(self, oid: pygit2.Oid) -> tuple[str, str, bytes]:
        hexid = str(oid)
        found = self.held.get(hexid)
        if found is None:
            raise KeyError(hexid)
        return hexid, *found

    def read_cb(self, oid: pygit2.Oid) -> tuple[ObjectType, bytes]:
        _, kind, body = self._find(oid)
        return _TYPES[kind], body

    def read_header_cb(self, oid: pygit2.Oid) -> tuple[ObjectType, int]:
        _, kind, body = self._find(oid)
        return _TYPES[kind], len(body)

    def read_prefix_cb(self, oid: pygit2.Oid) -> tuple[ObjectType, bytes, pygit2.Oid]:
        hexid, kind, body = self._find(oid)  # gitckpt names objects by full ids
        return _TYPES[kind], body, pygit2.Oid(hex=hexid)

    def exists_cb(self, oid: pygit2.Oid) -> bool:
        return str(oid) in self.held or oid in self.disk

    def exists_prefix_cb(self, oid: pygit2.Oid) -> pygit2.Oid:
        hexid, _, _ = self._find(oid)
        return pygit2.Oid(hex=hexid)

    def write_cb(self, oid: pygit2.Oid, data: bytes, kind: int) -> None:
        self.held.add(str(oid), _KINDS[int(kind)], bytes(data))

    def refresh_cb(self) -> None:
        pass

    def __iter__(self) -> Iterator[pygit2.Oid]:
        return (pygit2.Oid(hex=h) for h in list(self.held.objects))


def staging_odb(held: Held, objects_dir: str) -> pygit2.Odb:
    """An object database whose writes go to `held` and whose reads find `held`'s objects
    and those of the store at `objects_dir` (with its alternates), never writing there."""
    odb = pygit2.Odb()
    odb.add_backend(HeldBackend(held, pygit2.Odb(objects_dir)), _PRIORITY)
    odb.add_disk_alternate(objects_dir)
    return odb


def plain_repository(path: str | os.PathLike[str], held: Held | None) -> pygit2.Repository:
    """A libgit2 repository over a plain store's folder (for one merge); while staging
    (`held`), its writes go to `held` and its reads find them."""
    repo = pygit2.Repository(str(path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    if held is not None:
        disk = pygit2.Odb(os.path.join(str(path), "objects"))
        repo.odb.add_backend(HeldBackend(held, disk), _PRIORITY)
    return repo
