"""`Store.staging`, run against both stores: writes inside are held in memory and readable (by
the store, its scans, its libgit2 repository), `publish()` writes them, and leaving without it
writes nothing at all: no object file, no pack, no stat cache."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pygit2
import pytest
from test_contract import STORES

from gitckpt.core.objects import Mode, TreeEntry
from gitckpt.safety.scope import Scope
from gitckpt.store.base import Store


@pytest.fixture(params=sorted(STORES))
def store(request, tmp_path) -> Store:
    return STORES[request.param](tmp_path / "ws")


def on_disk(store: Store) -> dict[str, tuple[int, int, str]]:
    """Every file of the objects folder and of the state folders: size, mtime, content."""
    out = {}
    for top in (store.location / "objects", store.state_dir, store.shared.path):
        for folder, _, names in os.walk(top):
            for name in names:
                p = Path(folder, name)
                st = p.lstat()
                out[str(p)] = (st.st_size, st.st_mtime_ns,
                               hashlib.sha1(p.read_bytes()).hexdigest())
    return out


def test_a_discarded_staging_writes_nothing_and_a_published_one_everything(store):
    (store.root / "a.txt").write_text("in the first snapshot\n")
    scope = Scope.load(str(store.root))
    with store.lock():
        store.snapshot(scope)  # objects and stat cache as a save leaves them
        for i in range(300):  # more than a pack's threshold: a scan would write a pack
            (store.root / f"new{i}.txt").write_text(f"new {i}\n")
        before = on_disk(store)
        with store.staging():
            snap = store.snapshot(scope)
            blob = store.write_blob(b"held\n")
            tree = store.write_tree([TreeEntry(b"held.txt", Mode.FILE, blob)])
            assert store.read_blob(blob) == b"held\n"
            assert store.has_object(tree)
            assert len(store.read_tree(snap.tree)) == 301
            repo = store.repository()  # libgit2 sees the held objects, and writes to them
            merged = repo.merge_trees(snap.tree, tree, snap.tree).write_tree(repo)
            assert store.has_object(str(merged))
        assert on_disk(store) == before  # not one file written or touched
        for oid in (blob, tree, snap.tree, str(merged)):
            assert not store.has_object(oid)
        with store.staging() as publish:
            again = store.snapshot(scope)
            blob = store.write_blob(b"held\n")
            publish()
        store.flush()
    assert again.tree == snap.tree
    for oid in (blob, again.tree):
        assert store.has_object(oid)
    fresh = pygit2.Repository(str(store.location))
    assert str(fresh.get(again.tree).id) == again.tree  # git itself reads the published tree
    assert len(store.read_tree(again.tree)) == 301


def test_a_held_file_and_a_held_merge_are_kept_once_and_let_go_at_publish(store):
    """A large file is held as the bytes its scan read, the merged file as the bytes the
    merge built, not copies made on the way through libgit2's writes (a 38 MB revert would
    hold each twice more), and a merge reads a held blob in place. Publishing lets go."""
    big = b"".join(b"line %07d xxxxxxxxxxxxxxxxxxxxxxxxxx\n" % i for i in range(60_000))
    (store.root / "big.txt").write_bytes(big)
    scope = Scope.load(str(store.root))
    with store.lock():
        base = store.snapshot(scope).tree
        (store.root / "big.txt").write_bytes(big.replace(b"line 0000010 x", b"line 0000010 o"))
        with store.staging() as publish:
            held = store._held
            assert held is not None
            ours = store.snapshot(scope)
            ours_blob = next(e.id for e in store.read_tree(ours.tree) if e.name == b"big.txt")
            kept = held.get(ours_blob)
            assert kept is not None
            assert kept[1] == (store.root / "big.txt").read_bytes()
            theirs_blob = store.write_blob(big.replace(b"line 0000010 x", b"line 0000010 t"))
            theirs = store.write_tree([TreeEntry(b"big.txt", Mode.FILE, theirs_blob)])
            merge = store.merge_trees(base, ours.tree, theirs, renames=False)
            (conflict,) = merge.conflicts
            marked = merge.marked(conflict, "ours", "theirs")
            assert marked is not None
            assert marked.count(b"<<<<<<< ours") == 1
            assert len(marked) > len(big)  # whole: the shared ends put back around the middle
            oid = merge.blob(marked)
            assert held.get(oid)[1] is marked  # the very bytes, held once
            publish()
            assert len(held) == 0  # written: nothing of them stays in memory
        store.flush()
    assert store.read_blob(oid) == marked
    assert store.read_blob(ours_blob) == kept[1]
