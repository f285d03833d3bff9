"""A plain-folder store's refs: one file each, as git writes them (and `packed-refs`, if
someone ran `git pack-refs` on the store), replaced by fsync-and-rename under the store lock."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from gitckpt.core.errors import CHECK_STORE, RefMoved, StoreCorrupt, StoreNotWritable
from gitckpt.core.ids import ObjectId
from gitckpt.store.files import make_dir, write_file
from gitckpt.store.reflist import list_refs
from gitckpt.store.state import unsafe


class RefFiles:
    """The refs of the bare store at `path`. `flush` makes pending objects durable before a
    ref may name them; `checked` holds the folders known to be real folders (make_dir)."""

    def __init__(self, path: Path, flush: Callable[[], None], checked: set[Path]) -> None:
        self.path = path
        self.flush = flush
        self._checked = checked

    def get(self, name: str) -> ObjectId | None:
        try:
            text = (self.path / name).read_text().strip()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return self._packed().get(name)
        except OSError as e:
            raise StoreCorrupt(f"Cannot read {name} in {self.path}: {e.strerror}",
                               CHECK_STORE) from e
        if len(text) != 40 or text.strip("0123456789abcdef"):
            raise StoreCorrupt(f"{name} in {self.path} is damaged", CHECK_STORE)
        return ObjectId(text)

    def _packed(self) -> dict[str, ObjectId]:
        """Refs `git pack-refs` moved into packed-refs (if someone ran it on the store)."""
        try:
            lines = (self.path / "packed-refs").read_text().splitlines()
        except OSError:
            return {}
        out = {}
        for line in lines:
            parts = line.split()
            if len(parts) == 2 and len(parts[0]) == 40 and not line.startswith("#"):
                out[parts[1]] = ObjectId(parts[0])
        return out

    def list(self, prefix: str, damaged: list[str] | None = None) -> dict[str, ObjectId]:
        top = self.path / "refs"
        if top.is_symlink():
            raise unsafe(top)
        out, broken = list_refs(self.path, prefix)
        if broken and damaged is None:
            raise StoreCorrupt(f"{broken[0]} in {self.path} is damaged", CHECK_STORE)
        if damaged is not None:
            damaged += broken
        return out

    def _set(self, name: str, oid: ObjectId) -> None:
        self.flush()
        path = self.path / name
        try:
            make_dir(path.parent, self.path, self._checked)
            write_file(path, f"{oid}\n".encode())
        except OSError as e:
            raise StoreNotWritable(f"Cannot write {name} in {self.path}: {e.strerror}.",
                                   "Check the store folder's permissions and free space.") from e

    def create(self, name: str, oid: ObjectId) -> None:
        current = self.get(name)
        if current is not None:
            raise RefMoved(name, None, current)
        self._set(name, oid)

    def delete(self, name: str, old: ObjectId) -> None:
        current = self.get(name)
        if current != old:
            raise RefMoved(name, old, current)
        path = self.path / name
        try:
            path.unlink(missing_ok=True)
            if name in self._packed():
                lines = (self.path / "packed-refs").read_text().splitlines(keepends=True)
                kept = "".join(ln for ln in lines if not ln.rstrip("\n").endswith(" " + name))
                write_file(self.path / "packed-refs", kept.encode())
        except OSError as e:
            raise StoreNotWritable(f"Cannot delete {name} in {self.path}: {e.strerror}.",
                                   "Check the store folder's permissions.") from e
        for folder in path.parents:  # empty ref folders go too, as git's do
            if folder in (self.path / "refs", self.path):
                break
            try:
                folder.rmdir()
            except OSError:
                break
            self._checked.discard(folder)  # a later ref there makes it again

    def cas(self, name: str, new: ObjectId, old: ObjectId | None) -> None:
        current = self.get(name)
        if current != old:
            raise RefMoved(name, old, current)
        self._set(name, new)
