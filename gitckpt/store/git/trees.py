"""Workspace trees for the git store: the private index written as trees, or a base tree with
a scan's changes applied."""

from __future__ import annotations

import os
from functools import partial
from typing import Any, cast

import pygit2
from pygit2.enums import ObjectType

from gitckpt.core.errors import StoreCorrupt
from gitckpt.core.ids import ObjectId
from gitckpt.core.objects import (
    EMPTY_TREE,
    Mode,
    TreeEntry,
    apply_changes,
    decode_tree,
    encode_tree,
)
from gitckpt.store.git.split import read_checked
from gitckpt.store.packs.write import object_id


def workspace_tree(repo: pygit2.Repository, prefix: str, index: pygit2.Index,
                   base: str | None, changes: dict[str, tuple[int, str] | None]) -> ObjectId:
    """The workspace tree: `base` with `changes` applied, or the whole index written."""
    if base is not None:
        cut = len(prefix) + 1 if prefix else 0
        tree = apply_changes(partial(read_tree, repo), partial(write_tree, repo), ObjectId(base),
                             {os.fsencode(k[cut:]): v for k, v in changes.items()})
    else:
        try:
            root = index.write_tree(repo)
        except pygit2.GitError as e:  # an object the cache names is missing or damaged
            raise StoreCorrupt(f"Cannot write the workspace tree: {e}",
                               "Run `gitckpt doctor`; `gitckpt doctor --fix` deletes the "
                               "stat cache so the next save reads every file again.") from e
        try:
            # write_tree's id names a tree
            tree = ObjectId(str(cast(pygit2.Tree, repo[root])[prefix].id) if prefix
                            else str(root))
        except KeyError:
            tree = EMPTY_TREE
    if tree == EMPTY_TREE:
        repo.odb.write(ObjectType.TREE, b"")
    return tree

def read_tree(repo: pygit2.Repository, tree: ObjectId) -> list[TreeEntry]:
    if tree == EMPTY_TREE:
        return []
    return decode_tree(read_checked(repo, tree))

def write_tree(repo: pygit2.Repository, entries: list[TreeEntry]) -> ObjectId:
    return ObjectId(str(repo.odb.write(ObjectType.TREE, encode_tree(entries))))


def index_trees(index: pygit2.Index) -> list[bytes]:
    """The bodies of the trees `index.write_tree()` writes, computed here, subtrees first."""
    root: dict[bytes, Any] = {}  # name -> a folder (a dict like this one) or (mode, id)
    for e in index:
        *folders, name = os.fsencode(e.path).split(b"/")
        node = root
        for d in folders:
            node = node.setdefault(d, {})
        node[name] = (Mode(int(e.mode)), str(e.id))
    out: list[bytes] = []

    def write(node: dict[bytes, Any]) -> str:
        entries = [TreeEntry(name, Mode.TREE, ObjectId(write(v))) if isinstance(v, dict)
                   else TreeEntry(name, v[0], ObjectId(v[1])) for name, v in node.items()]
        body = encode_tree(entries)
        out.append(body)
        return object_id("tree", body)

    write(root)
    return out
