"""The bare repository inside a handoff package: a DirStore with no workspace, holding loose
objects only. Read back, it is input from elsewhere: its shape is checked (gitckpt's own
config, no borrowed or packed objects) and every object it yields hashes to its id."""

from __future__ import annotations

import os
from pathlib import Path

from gitckpt.core.errors import StoreCorrupt
from gitckpt.core.ids import ObjectId
from gitckpt.store.files import read_loose
from gitckpt.store.plain.store import CONFIG_TEXT, DirStore


class PackageStore(DirStore):
    """`folder` is the package's `checkpoints.git`; `package` the package folder."""

    packs_new_objects = False  # a package is read back object by object, loose

    def __init__(self, package: Path, folder: Path) -> None:
        super().__init__(package, folder, bare=True)

    def check_shape(self, bad: str) -> None:
        """StoreCorrupt (with hint `bad`) unless this is the repository an export writes: git
        reads its config (a pager, an alias or a filter there would run on `git log`), and
        objects must all be here and loose."""
        try:
            config = (self.path / "config").read_bytes()
        except OSError:
            config = None
        if config != CONFIG_TEXT.encode():
            raise StoreCorrupt("The package's repository config is not the one gitckpt "
                               "writes.", bad)
        if os.path.lexists(self.path / "objects" / "info" / "alternates"):
            raise StoreCorrupt("The package's repository borrows objects from elsewhere "
                               "(objects/info/alternates).", bad)
        packs = self.path / "objects" / "pack"
        if packs.is_dir() and any(packs.iterdir()):
            raise StoreCorrupt("The package holds packed objects.", bad)

    def object_ids(self) -> list[ObjectId]:
        """Every object in the package."""
        return list(self.loose_objects())

    def read_checked(self, oid: ObjectId, bad: str) -> tuple[str, bytes]:
        """(kind, body) of object `oid`, checked to hash to its id; StoreCorrupt with hint
        `bad` if it is missing or damaged."""
        self.flush()
        path = self._object_path(oid)
        if not path.is_file():
            raise StoreCorrupt(f"Object {oid} is missing from the package.", bad)
        try:
            return read_loose(path, oid)
        except StoreCorrupt as e:
            raise StoreCorrupt(e.message, bad) from e
