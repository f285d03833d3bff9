"""Git object encoding and ids in pure Python: the shared vocabulary of both stores."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum
from typing import TYPE_CHECKING

from gitckpt.core.gitnames import refused_name
from gitckpt.core.ids import ObjectId

if TYPE_CHECKING:
    from hashlib import _Hash


class Mode(IntEnum):
    """Tree entry modes, as git writes them."""

    FILE = 0o100644
    EXECUTABLE = 0o100755
    SYMLINK = 0o120000
    TREE = 0o040000
    GITLINK = 0o160000


@dataclass(frozen=True, order=True)
class TreeEntry:
    """One entry of a tree object. `name` is raw bytes: git names need not be UTF-8."""

    name: bytes
    mode: Mode
    id: ObjectId


@dataclass(frozen=True)
class Commit:
    """The parts of a commit gitckpt reads back."""

    id: ObjectId
    tree: ObjectId
    parents: tuple[ObjectId, ...]
    time: int
    message: str


EMPTY_TREE = ObjectId("4b825dc642cb6eb9a060e54bf8d69288fbee4904")

AUTHOR_NAME = "gitckpt"
AUTHOR_EMAIL = "gitckpt@localhost"


def sha1(data: bytes = b"") -> _Hash:
    """A SHA-1 of `data` (`update` adds more), with `hashlib` imported on first use: loading
    OpenSSL's hashes costs a git store's hook 3 ms it never uses. Every SHA-1 gitckpt makes."""
    import hashlib

    return hashlib.sha1(data)


def hash_object(kind: str, body: bytes) -> ObjectId:
    """The git id of an object: SHA-1 over `"<kind> <len>\\0" + body`."""
    return ObjectId(sha1(b"%s %d\0" % (kind.encode(), len(body)) + body).hexdigest())


def _tree_sort_key(entry: TreeEntry) -> bytes:
    # git sorts tree entries as if directory names ended with "/".
    return entry.name + b"/" if entry.mode == Mode.TREE else entry.name


def encode_tree(entries: list[TreeEntry]) -> bytes:
    """The body of a tree object holding `entries` (in any order)."""
    out = bytearray()
    for e in sorted(entries, key=_tree_sort_key):
        out += b"%o %s\0" % (e.mode, e.name) + bytes.fromhex(e.id)
    return bytes(out)


def _mode(value: int) -> Mode:
    """A tree entry mode; git's legacy group-writable file modes (100664) read as files."""
    if value >> 9 == 0o100:
        return Mode.EXECUTABLE if value & 0o100 else Mode.FILE
    return Mode(value)  # ValueError for anything else


def decode_tree(body: bytes) -> list[TreeEntry]:
    """The entries of a tree object body; ValueError if it is malformed."""
    entries, pos = [], 0
    while pos < len(body):
        space = body.index(b" ", pos)
        nul = body.index(b"\0", space)
        mode = _mode(int(body[pos:space], 8))
        oid = ObjectId(body[nul + 1 : nul + 21].hex())
        entries.append(TreeEntry(body[space + 1 : nul], mode, oid))
        pos = nul + 21
    return entries


def encode_commit(tree: ObjectId, parents: list[ObjectId], time: int, message: str) -> bytes:
    """The body of a commit by gitckpt (author and committer alike, UTC)."""
    sig = f"{AUTHOR_NAME} <{AUTHOR_EMAIL}> {time} +0000"
    lines = [f"tree {tree}", *(f"parent {p}" for p in parents), f"author {sig}", f"committer {sig}"]
    return ("\n".join(lines) + "\n\n" + message).encode()


def decode_commit(oid: ObjectId, body: bytes) -> Commit:
    """The tree, parents, committer time and message of a commit object body."""
    head, _, message = body.partition(b"\n\n")
    tree, parents, time = None, [], 0
    for line in head.split(b"\n"):
        key, _, value = line.partition(b" ")
        if key == b"tree":
            tree = ObjectId(value.decode())
        elif key == b"parent":
            parents.append(ObjectId(value.decode()))
        elif key == b"committer":
            time = int(value.rsplit(b" ", 2)[1])
    if tree is None:
        raise ValueError(f"commit {oid} has no tree")
    return Commit(oid, tree, tuple(parents), time, message.decode("utf-8", "replace"))


Change = tuple[int, str] | None  # (mode, id) of a path's new content, or None when removed


def apply_changes(read_tree: Callable[[ObjectId], list[TreeEntry]],
                  write_tree: Callable[[list[TreeEntry]], ObjectId], tree: ObjectId,
                  changes: dict[bytes, Change]) -> ObjectId:
    """Tree `tree` with file-level `changes` (path -> Change) applied.

    Only the trees on the changed paths are read and written; folders left empty vanish,
    and a file replacing a folder of the same name wins (both cannot exist on disk).
    """
    if not changes:
        return tree
    entries = {e.name: e for e in read_tree(tree)} if tree != EMPTY_TREE else {}
    leaves: dict[bytes, Change] = {}
    below: dict[bytes, dict[bytes, Change]] = {}
    for path, change in changes.items():
        head, sep, rest = path.partition(b"/")
        if sep:
            below.setdefault(head, {})[rest] = change
        else:
            leaves[head] = change
    for name, sub in below.items():
        old = entries.pop(name, None)
        child = apply_changes(read_tree, write_tree,
                              old.id if old and old.mode == Mode.TREE else EMPTY_TREE, sub)
        if child != EMPTY_TREE:
            entries[name] = TreeEntry(name, Mode.TREE, child)
    for name, change in leaves.items():
        if change is not None:
            entries[name] = TreeEntry(name, Mode(change[0]), ObjectId(change[1]))
        elif name in entries and entries[name].mode != Mode.TREE:
            del entries[name]
    return write_tree(list(entries.values())) if entries else EMPTY_TREE


def unsafe_name(name: bytes, mode: int | None = None) -> bool:
    """True for a tree entry name no checkout may write: it could escape the folder it is in,
    plant a repository, or is one git and libgit2 refuse in a work tree (`.git` in any case,
    its NTFS and HFS+ lookalikes, `GIT~1`, a `.gitmodules` symlink; see `gitnames`)."""
    return refused_name(name, mode=mode) is not None


class UnsafeTree(ValueError):
    """A tree holds a name that `unsafe_name` refuses; `path` is where."""

    def __init__(self, path: bytes) -> None:
        super().__init__(f"unsafe path {path!r}")
        self.path = path


Pair = tuple[bytes, "TreeEntry | None", "TreeEntry | None"]


def in_filter(path: bytes, only: tuple[bytes, ...]) -> bool:
    """True if `path` is one of `only` or below one of them (an empty filter takes all)."""
    return not only or any(path == f or path.startswith(f + b"/") for f in only)


def _reaches(folder: bytes, only: tuple[bytes, ...]) -> bool:
    return not only or any(f == folder or f.startswith(folder + b"/")
                           or folder.startswith(f + b"/") for f in only)


def diff_entries(read_tree: Callable[[ObjectId], list[TreeEntry]], old: ObjectId,
                 new: ObjectId, only: tuple[bytes, ...] = (), check_new: bool = False,
                 ) -> Iterator[Pair]:
    """(path, old entry, new entry) for every non-folder path that differs, in path order.

    Identical subtrees are skipped, so the cost follows the changes, not the tree size. A
    file that became a folder (or back) yields the file and every file of the folder.
    `only` limits the walk to these paths and what is below them. With `check_new`, a name
    in `new` that `unsafe_name` refuses raises UnsafeTree before it is yielded.
    """

    def walk(a: ObjectId | None, b: ObjectId | None, prefix: bytes) -> Iterator[Pair]:
        left = {e.name: e for e in read_tree(a)} if a else {}
        right = {e.name: e for e in read_tree(b)} if b else {}
        for name in sorted(left.keys() | right.keys()):
            x, y = left.get(name), right.get(name)
            path = prefix + name
            if y is not None and check_new and unsafe_name(name, int(y.mode)):
                raise UnsafeTree(path)
            if x == y or not _reaches(path, only):
                continue
            x_dir = x is not None and x.mode == Mode.TREE
            y_dir = y is not None and y.mode == Mode.TREE
            if not x_dir and not y_dir:
                if in_filter(path, only):
                    yield path, x, y
                continue
            if x is not None and not x_dir and in_filter(path, only):
                yield path, x, None
            if y is not None and not y_dir and in_filter(path, only):
                yield path, None, y
            yield from walk(x.id if x is not None and x_dir else None,
                            y.id if y is not None and y_dir else None, path + b"/")

    if old != new:
        yield from walk(old, new, b"")
