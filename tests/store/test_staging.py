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
