"""A three-way merge of trees behind the store interface: libgit2's, on the store's own objects
(both stores: a plain folder's store is a bare repository libgit2 opens as it is).

The engine sees only paths, modes and ids: the conflicts libgit2 left, a file merged with
git-style markers, and the tree after each conflict is settled.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pygit2
from pygit2.enums import FileMode

from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode
from gitckpt.store.staging import Held
from gitckpt.store.trim import Trims, trimmed, view

_BINARY_PROBE = 8000  # bytes git looks at for a NUL
_Entry = pygit2.IndexEntry | None  # one side of a conflict in libgit2's index


@dataclass(frozen=True)
class Side:
    """One side of a conflicting path: the path on that side, its mode and blob (or tree) id."""

    path: str
    mode: int
    id: ObjectId


@dataclass(frozen=True)
class Conflict:
    """A path the merge could not settle; a side is None where that tree lacks the path."""

    ancestor: Side | None
    ours: Side | None
    theirs: Side | None

    @property
    def path(self) -> str:
        side = self.ours or self.theirs or self.ancestor
        assert side is not None
        return side.path


def _side(entry: pygit2.IndexEntry | None, trims: Trims) -> Side | None:
    return None if entry is None else Side(str(entry.path), int(entry.mode),
                                           trims.real(str(entry.path), ObjectId(str(entry.id))))


class Merge:
    """A merge in progress: its conflicts, settled one by one, then its tree."""

    def __init__(self, repo: pygit2.Repository, index: pygit2.Index,
                 trims: Trims | None = None, held: Held | None = None) -> None:
        self._repo = repo
        self._held = held
        self._index = index
        self._trims = trims = trims or Trims()
        # path -> libgit2's own entries (ancestor, ours, theirs), for merge_file
        self._raw: dict[str, tuple[_Entry, _Entry, _Entry]] = {}
        self.conflicts: list[Conflict] = []
        for a, o, t in list(index.conflicts or ()):
            c = Conflict(_side(a, trims), _side(o, trims), _side(t, trims))
            self._raw[c.path] = (a, o, t)
            self.conflicts.append(c)
        for path in trims.by_path.keys() - self._raw.keys():  # merged cleanly: made whole
            entry = index[path] if path in index else None  # noqa: SIM401 (no Index.get)
            if entry is not None:
                whole = trims.whole(repo, path, repo[entry.id].read_raw())
                assert whole is not None
                index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=self.blob(whole)), entry.mode))

    def kind(self, c: Conflict) -> str:
        """What kind of conflict it is: a file's content (mergeable as text), a binary file, a
        file deleted on one side, a rename, or a file against a folder."""
        sides = [s for s in (c.ancestor, c.ours, c.theirs) if s is not None]
        if c.ours is None or c.theirs is None:
            return "modify/delete"
        if len({s.path for s in sides}) > 1:
            return "rename"
        for s in sides:
            if s.mode not in (Mode.FILE, Mode.EXECUTABLE):
                return "file/folder" if s.mode in (Mode.TREE, Mode.GITLINK) else "binary"
            if b"\0" in view(self._repo, s.id, self._held)[:_BINARY_PROBE].tobytes():  # not it all
                return "binary"
        return "content"

    def marked(self, c: Conflict, ours_label: str, theirs_label: str) -> bytes | None:
        """The file merged with git-style markers labelled with the two sides, or None if it
        is not UTF-8 (never merged)."""
        anc, ours, theirs = self._raw[c.path]
        try:  # of a large file, its middle (store/trim.py), made whole below
            text = self._repo.merge_file_from_index(anc, ours, theirs).contents
        except UnicodeDecodeError:
            return None
        assert ours is not None  # a content conflict: both sides hold the path
        assert theirs is not None
        # libgit2 labels both sides with the path; say which side is which, as git does
        text = re.sub(rf"^<<<<<<< {re.escape(str(ours.path))}(\r?)$",
                      lambda m: f"<<<<<<< {ours_label}{m.group(1)}", text, flags=re.M)
        text = re.sub(rf"^>>>>>>> {re.escape(str(theirs.path))}(\r?)$",
                      lambda m: f">>>>>>> {theirs_label}{m.group(1)}", text, flags=re.M)
        return self._trims.whole(self._repo, c.path, text.encode("utf-8", "surrogateescape"),
                                 text=True)

    def blob(self, data: bytes) -> ObjectId:
        """Write a merged file's bytes where the merge's objects go (held while staging).
        Held, these very bytes are kept: libgit2's write would copy them twice on the way to
        the staging backend (a 38 MB merge held three times)."""
        if self._held is None:
            return ObjectId(str(self._repo.create_blob(data)))
        oid = pygit2.hash(data)
        if oid not in self._repo.odb:  # as libgit2's write: an object the store has stays
            self._held.add(str(oid), "blob", data)
        return ObjectId(str(oid))

    def settle(self, resolved: list[tuple[str, tuple[int, ObjectId] | None]]) -> ObjectId:
        """The merged tree once each conflicting path is settled: (mode, id), or None for
        absent."""
        index = self._index
        for path, _ in resolved:
            del index.conflicts[path]
        for path, content in resolved:
            if content is None:
                if path in index:
                    index.remove(path)
            else:
                index.add(pygit2.IndexEntry(path, pygit2.Oid(hex=content[1]),
                                            FileMode(content[0])))  # int(mode) is content[0]
        return ObjectId(str(index.write_tree(self._repo)))


def merge_trees(repo: pygit2.Repository, base: ObjectId, ours: ObjectId, theirs: ObjectId,
                renames: bool, held: Held | None = None) -> Merge:
    """libgit2's merge of `ours` and `theirs` from `base` (`renames`: found by similarity, as
    git finds them); `held`: the objects held while staging, which `repo` writes into."""
    flags = pygit2.enums.MergeFlag.FIND_RENAMES if renames else pygit2.enums.MergeFlag(0)
    base, ours, theirs, trims = trimmed(repo, base, ours, theirs, held)
    return Merge(repo, repo.merge_trees(base, ours, theirs, flags=flags), trims, held)
