"""Per-file line counts and unified patches between two trees, in git's format."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Mode, TreeEntry, diff_entries
from gitckpt.store.lines import hunks, line_counts

ReadTree = Callable[[ObjectId], list[TreeEntry]]
ReadBlob = Callable[[ObjectId], bytes]
_BINARY_PROBE = 8000  # git's heuristic: a NUL in the first 8000 bytes means binary


@dataclass(frozen=True)
class FileDiff:
    """One changed path: what happened to it and how many lines moved (None: binary)."""

    path: str
    status: str  # added | modified | deleted | mode | type
    old: TreeEntry | None
    new: TreeEntry | None
    additions: int | None
    deletions: int | None

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "status": self.status, "additions": self.additions,
                "deletions": self.deletions, "binary": self.additions is None,
                "old_mode": f"{self.old.mode:06o}" if self.old else None,
                "new_mode": f"{self.new.mode:06o}" if self.new else None}


def _status(old: TreeEntry | None, new: TreeEntry | None) -> str:
    if old is None:
        return "added"
    if new is None:
        return "deleted"
    if old.id == new.id:
        return "mode"
    if (old.mode == Mode.SYMLINK) != (new.mode == Mode.SYMLINK):
        return "type"
    return "modified"


def _content(read_blob: ReadBlob, entry: TreeEntry | None) -> bytes:
    if entry is None or entry.mode == Mode.GITLINK:
        return b"" if entry is None else b"Subproject commit %s\n" % entry.id.encode()
    return read_blob(entry.id)


def _binary(data: bytes) -> bool:
    return b"\0" in data[:_BINARY_PROBE]


def file_diffs(read_tree: ReadTree, read_blob: ReadBlob, old: ObjectId, new: ObjectId,
               only: tuple[str, ...] = ()) -> Iterator[tuple[FileDiff, bytes, bytes]]:
    """Each changed path with its old and new content, in path order."""
    for path, x, y in diff_entries(read_tree, old, new, tuple(os.fsencode(p) for p in only)):
        a, b = _content(read_blob, x), _content(read_blob, y)
        if _binary(a) or _binary(b):
            plus = minus = None
        else:
            plus, minus = line_counts(a, b)
        yield FileDiff(os.fsdecode(path), _status(x, y), x, y, plus, minus), a, b


def unified(diff: FileDiff, a: bytes, b: bytes, context: int = 3) -> str:
    """The `git diff` text of one file (headers, then hunks or a binary notice)."""
    path = diff.path
    out = [f"diff --git a/{path} b/{path}\n"]
    old, new = diff.old, diff.new
    if old is None and new is not None:
        out.append(f"new file mode {new.mode:06o}\n")
    elif new is None and old is not None:
        out.append(f"deleted file mode {old.mode:06o}\n")
    elif old is not None and new is not None and old.mode != new.mode:
        out += [f"old mode {old.mode:06o}\n", f"new mode {new.mode:06o}\n"]
    if diff.status == "mode":
        return "".join(out)
    left = "/dev/null" if old is None else f"a/{path}"
    right = "/dev/null" if new is None else f"b/{path}"
    if diff.additions is None:
        out.append(f"Binary files {left} and {right} differ\n")
        return "".join(out)
    body = hunks(a, b, context)
    if body:
        out += [f"--- {left}\n", f"+++ {right}\n", body]
    return "".join(out)
