"""A store's notes: one JSON text per timeline commit, under refs/notes/checkpoints, written
for every store on top of its objects and refs: a notes commit whose tree fans out by the
first two hex digits (as git does for large notes trees), so adding a note rewrites two small
trees however many notes there are. Flat trees are read too."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from gitckpt.core.errors import StoreCorrupt
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Commit, Mode, TreeEntry

NOTES_REF = "refs/notes/checkpoints"
#: Decoded notes fan-out trees by id, shared by every store of the process (see Notes._fan);
#: at most _FANS_KEPT (256 per notes commit: a warm service keeps a few stores' worth).
_FANS: dict[ObjectId, dict[bytes, TreeEntry]] = {}
_FANS_KEPT = 2048


class Notes:
    """The notes side of a Backend, over the objects and refs it brings."""

    if TYPE_CHECKING:
        def get_ref(self, name: str) -> ObjectId | None: ...

        def cas_ref(self, name: str, new: ObjectId, old: ObjectId | None) -> None: ...

        def read_tree(self, oid: ObjectId) -> list[TreeEntry]: ...

        def read_commit(self, oid: ObjectId) -> Commit: ...

        def read_blob(self, oid: ObjectId) -> bytes: ...

        def write_blob(self, data: bytes) -> ObjectId: ...

        def write_tree(self, entries: list[TreeEntry]) -> ObjectId: ...

        def write_commit(self, tree: ObjectId, parents: list[ObjectId], message: str,
                         time: int) -> ObjectId: ...


    def _notes_root(self) -> tuple[ObjectId | None, dict[bytes, TreeEntry]]:
        head = self.get_ref(NOTES_REF)
        cached = self.__dict__.get("_notes")
        if cached is None or cached[0] != head:
            entries = {}
            if head is not None:
                entries = {e.name: e for e in self.read_tree(self.read_commit(head).tree)}
            cached = self.__dict__["_notes"] = (head, entries)
        return cached

    def _fan(self, oid: ObjectId) -> dict[bytes, TreeEntry]:
        """A notes fan-out tree's entries by name, decoded once per process (an object's id
        names the same content in every repository, so the table is shared)."""
        got = _FANS.get(oid)
        if got is None:
            got = {e.name: e for e in self.read_tree(oid)}
            if len(_FANS) >= _FANS_KEPT:
                del _FANS[next(iter(_FANS))]  # the oldest out
            _FANS[oid] = got
        return got

    def note_id(self, oid: ObjectId) -> ObjectId | None:
        """The blob of the note attached to commit `oid`, or None."""
        _, root = self._notes_root()
        fan = root.get(oid[:2].encode())
        if fan is not None and fan.mode == Mode.TREE:
            leaf = self._fan(fan.id).get(oid[2:].encode())
            if leaf is not None:
                return leaf.id
        flat = root.get(oid.encode())
        return None if flat is None else flat.id

    def read_note(self, oid: ObjectId) -> str | None:
        """The note attached to commit `oid`, or None."""
        blob = self.note_id(oid)
        return None if blob is None else self.read_blob(blob).decode("utf-8", "replace")

    def notes_head(self, again: bool = True) -> ObjectId | None:
        """The notes commit: read from the ref again, or (`again` False) as this store last
        read or wrote it (the ref is read only if it never was)."""
        cached = None if again else self.__dict__.get("_notes")
        return (cached or self._notes_root())[0]

    def changed_notes(self, old: ObjectId | None, new: ObjectId | None
                      ) -> set[ObjectId] | None:
        """The commits whose notes differ (added, changed or removed) from notes commit `old`
        to `new`; None if that cannot be told (either is unknown or unreadable). Costs what
        changed: unchanged fan-out trees are passed over by id."""
        if old == new:
            return set()
        if old is None or new is None:
            return None
        try:
            a, b = ({e.name: e for e in self.read_tree(self.read_commit(c).tree)}
                    for c in (old, new))
        except (StoreCorrupt, KeyError, ValueError):
            return None
        out: set[ObjectId] = set()
        for name in a.keys() | b.keys():
            x, y = a.get(name), b.get(name)
            if x == y:
                continue
            fans = [e for e in (x, y) if e is not None and e.mode == Mode.TREE]
            if len(name) != 2 or len(fans) != len([e for e in (x, y) if e is not None]):
                out.add(ObjectId(name.decode("ascii", "replace")))  # a flat note
                continue
            fx = self._fan(x.id) if x is not None else {}
            fy = self._fan(y.id) if y is not None else {}
            for leaf in fx.keys() | fy.keys():
                if fx.get(leaf) != fy.get(leaf):
                    out.add(ObjectId((name + leaf).decode("ascii", "replace")))
        return out

    def write_note(self, oid: ObjectId, text: str) -> None:
        """Attach `text` to commit `oid`, replacing any earlier note. The caller holds the lock
        (git notes lose concurrent writes: the notes ref moves by compare-and-swap)."""
        self.update_notes({oid: text})

    def update_notes(self, changes: dict[ObjectId, str | None],
                     message: str = "Notes added by 'gitckpt'\n") -> None:
        """Set (text) or remove (None) the notes of many commits in one notes commit. The
        caller holds the lock."""
        if not changes:
            return
        head, root = self._notes_root()
        root = dict(root)
        by_fan: dict[bytes, dict[bytes, str | None]] = {}
        for oid, text in changes.items():
            root.pop(oid.encode(), None)  # a flat entry from another writer: fanned out now
            by_fan.setdefault(oid[:2].encode(), {})[oid[2:].encode()] = text
        for fan_name, leaves_changed in by_fan.items():
            fan = root.get(fan_name)
            leaves = dict(self._fan(fan.id)) if fan and fan.mode == Mode.TREE else {}
            for leaf, text in leaves_changed.items():
                if text is None:
                    leaves.pop(leaf, None)
                else:
                    leaves[leaf] = TreeEntry(leaf, Mode.FILE, self.write_blob(text.encode()))
            if leaves:
                root[fan_name] = TreeEntry(fan_name, Mode.TREE,
                                           self.write_tree(list(leaves.values())))
            else:
                root.pop(fan_name, None)
        commit = self.write_commit(self.write_tree(list(root.values())),
                                   [head] if head else [], message, int(time.time()))
        self.cas_ref(NOTES_REF, commit, head)
        self.__dict__["_notes"] = (commit, root)  # the next read need not fetch it again

