"""The one walk from commits to every object they reach, shared by export, import, compress
and doctor."""

from __future__ import annotations

import os
from collections.abc import Callable

from gitckpt.core.errors import CHECK_STORE, FileTooLarge, StoreCorrupt
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import Commit, Mode, decode_commit, decode_tree, unsafe_name
from gitckpt.core.progress import Meter

ReadObject = Callable[[ObjectId], tuple[str, bytes]]


# Snapshots skip folders deeper than scope.MAX_DEPTH; a tree much deeper than that was crafted
# (and would exhaust the recursion of the tree walks that read it).
MAX_TREE_DEPTH = 150


def reachable(read_object: ReadObject, tips: list[ObjectId], *,  # noqa: C901 (baseline)
              seen: set[ObjectId] | None = None,
              blob_exists: Callable[[ObjectId], bool] | None = None,
              missing: Callable[[ObjectId], None] | None = None,
              check_names: bool = False, hint: str = CHECK_STORE,
              blob_size: Callable[[ObjectId], int] | None = None,
              max_blob: int | None = None) -> dict[ObjectId, str]:
    """Every object reachable from the commits `tips` (parents, trees, blobs; gitlinks are
    another repository's) and not already in `seen`, which the walk extends, with its kind.

    `read_object` raises StoreCorrupt for a missing object, unless `missing` is given: then
    `missing(oid)` is told and the walk goes on past it. `blob_exists` checks blobs without
    reading them (default: each blob is read and its kind checked). With `check_names`, a tree
    holding a name no checkout may write is refused. Anything malformed is StoreCorrupt with
    `hint`. With `blob_size` (an object's size from its header) and `max_blob`, a blob larger
    than `max_blob` is FileTooLarge, naming the first path it was found at, before it is read.
    """
    seen = set() if seen is None else seen
    kinds: dict[ObjectId, str] = {}

    meter = Meter("Walking the checkpoints", "objects")

    def body(oid: ObjectId, expected: str) -> bytes | None:
        meter.advance()
        try:
            kind, data = read_object(oid)
        except StoreCorrupt:
            if missing is None:
                raise
            missing(oid)
            return None
        if kind != expected:
            raise StoreCorrupt(f"Object {oid} is a {kind}, not a {expected}", hint)
        kinds[oid] = kind
        return data

    commits, trees = list(tips), []
    try:
        while commits:
            oid = commits.pop()
            if oid in seen:
                continue
            seen.add(oid)
            data = body(oid, "commit")
            if data is not None:
                c = decode_commit(oid, data)
                commits += c.parents
                trees.append((c.tree, 0, b""))
        while trees:
            oid, depth, where = trees.pop()
            if oid in seen:
                continue
            seen.add(oid)
            if check_names and depth > MAX_TREE_DEPTH:
                raise StoreCorrupt(f"Tree {oid} is nested {depth} folders deep; no snapshot "
                                   "holds more than a hundred.", hint)
            data = body(oid, "tree")
            names: set[bytes] = set()
            for e in decode_tree(data) if data is not None else ():
                if check_names and unsafe_name(e.name, int(e.mode)):
                    raise StoreCorrupt(f"Tree {oid} holds an unsafe name {e.name!r}", hint)
                if check_names and e.name in names:  # git fsck's duplicateEntries
                    raise StoreCorrupt(f"Tree {oid} holds {e.name!r} twice", hint)
                names.add(e.name)
                if e.mode == Mode.TREE:
                    trees.append((e.id, depth + 1, where + e.name + b"/"))
                elif e.mode != Mode.GITLINK and e.id not in seen:
                    seen.add(e.id)
                    if max_blob is not None and blob_size is not None and (
                            size := blob_size(e.id)) > max_blob:
                        raise FileTooLarge(os.fsdecode(where + e.name), size, max_blob)
                    if blob_exists is None:
                        body(e.id, "blob")
                    elif blob_exists(e.id):
                        kinds[e.id] = "blob"
                    elif missing is not None:
                        missing(e.id)
                    else:
                        raise StoreCorrupt(f"Object {e.id} is missing", hint)
    except (ValueError, IndexError, UnicodeDecodeError) as e:
        raise StoreCorrupt(f"A commit or tree is malformed ({e})", hint) from e
    finally:
        meter.close()
    return kinds


def commits(read_commit: Callable[[ObjectId], Commit], tips: list[ObjectId]) -> set[ObjectId]:
    """The commits reachable from `tips` by every parent (`read_commit(oid).parents`)."""
    seen: set[ObjectId] = set()
    todo = list(tips)
    while todo:
        oid = todo.pop()
        if oid not in seen:
            seen.add(oid)
            todo.extend(read_commit(oid).parents)
    return seen
