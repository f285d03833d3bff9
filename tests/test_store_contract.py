"""The store contract (store/base.py), run against every store implementation."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock
import pytest
from conftest import git

from gitckpt.errors import RefMoved, StoreBusy, StoreCorrupt
from gitckpt.objects import EMPTY_TREE, Mode, TreeEntry, encode_commit, encode_tree, hash_object
from gitckpt.scope import Scope
from gitckpt.store import open_store
from gitckpt.store.base import NOTES_REF, Store
from gitckpt.store.dir import CONFIG_TEXT, DirStore
from gitckpt.store.package_store import PackageStore


def git_store(root: Path) -> Store:
    root.mkdir()
    git(root, "init", "-q")
    return open_store(root)


def dir_store(root: Path) -> Store:
    root.mkdir()
    store = open_store(root)
    store.prepare()
    return store


STORES = {"git": git_store, "dir": dir_store}


@pytest.fixture(params=sorted(STORES))
def store(request, tmp_path) -> Store:
    return STORES[request.param](tmp_path / "ws")


def files(store: Store) -> dict[str, tuple[int, bytes]]:
    """The snapshot's tree flattened: path -> (mode, blob bytes or link target)."""
    with store.lock():
        snap = store.snapshot(Scope.load(str(store.root)))
    out: dict[str, tuple[int, bytes]] = {}

    def walk(tree, prefix):
        for e in store.read_tree(tree):
            name = prefix + os.fsdecode(e.name)
            if e.mode == Mode.TREE:
                walk(e.id, name + "/")
            else:
                out[name] = (e.mode, store.read_blob(e.id) if e.mode != Mode.GITLINK else b"")
    walk(snap.tree, "")
    return out


def test_objects_round_trip_with_git_ids(store):
    blob = store.write_blob(b"hello\n")
    assert blob == hash_object("blob", b"hello\n")
    assert store.read_blob(blob) == b"hello\n"
    assert store.write_blob(b"hello\n") == blob  # idempotent
    entries = [TreeEntry(b"a.txt", Mode.FILE, blob), TreeEntry(b"\xe9t\xe9", Mode.EXECUTABLE, blob)]
    tree = store.write_tree(entries)
    assert sorted(store.read_tree(tree)) == sorted(entries)
    commit = store.write_commit(tree, [], "init: x\n", 1_700_000_000)
    c = store.read_commit(commit)
    assert (c.tree, c.parents, c.time, c.message) == (tree, (), 1_700_000_000, "init: x\n")
    child = store.write_commit(EMPTY_TREE, [commit], "step 1: y\n", 1_700_000_001)
    assert store.read_commit(child).parents == (commit,)
    assert store.has_object(child) and not store.has_object(hash_object("blob", b"nope"))


def test_reading_a_missing_or_wrong_object_is_store_corrupt(store):
    blob = store.write_blob(b"x")
    with pytest.raises(StoreCorrupt):
        store.read_tree(blob)
    with pytest.raises(StoreCorrupt):
        store.read_blob(hash_object("blob", b"never written"))


def test_refs_create_once_and_compare_and_swap(store):
    a = store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = store.write_commit(EMPTY_TREE, [a], "b\n", 2)
    name = "refs/checkpoints/t-0000/head"
    assert store.get_ref(name) is None
    with store.lock():
        store.create_ref(name, a)
        with pytest.raises(RefMoved):
            store.create_ref(name, b)
        assert store.get_ref(name) == a
        with pytest.raises(RefMoved):
            store.cas_ref(name, b, None)
        with pytest.raises(RefMoved):
            store.cas_ref(name, b, b)
        assert store.get_ref(name) == a
        store.cas_ref(name, b, a)
        store.cas_ref("refs/checkpoints/t-0000/steps/0", a, None)
    assert store.get_ref(name) == b
    assert store.list_refs("refs/checkpoints/t-0000/") == {
        name: b, "refs/checkpoints/t-0000/steps/0": a}


def test_notes(store):
    a = store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = store.write_commit(EMPTY_TREE, [], "b\n", 2)
    assert store.read_note(a) is None
    with store.lock():
        store.write_note(a, '{"schema": 1}')
        store.write_note(b, "ünïcode ✓")
        store.write_note(a, '{"schema": 1, "x": 2}')
    assert store.read_note(a) == '{"schema": 1, "x": 2}'
    assert store.read_note(b) == "ünïcode ✓"


def test_snapshot_kinds_of_files(store):
    root = store.root
    (root / "empty").write_bytes(b"")
    (root / "run.sh").write_bytes(b"#!/bin/sh\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "dir" / "deep").mkdir(parents=True)
    (root / "dir" / "deep" / "f.txt").write_bytes(b"deep\n")
    os.symlink("dir/deep/f.txt", root / "link")
    os.symlink("/nonexistent/target", root / "dangling")
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin-1 name\n")
    got = files(store)
    assert got == {
        "empty": (Mode.FILE, b""),
        "run.sh": (Mode.EXECUTABLE, b"#!/bin/sh\n"),
        "dir/deep/f.txt": (Mode.FILE, b"deep\n"),
        "link": (Mode.SYMLINK, b"dir/deep/f.txt"),
        "dangling": (Mode.SYMLINK, b"/nonexistent/target"),
        os.fsdecode(b"caf\xe9.txt"): (Mode.FILE, b"latin-1 name\n"),
    }
    # Changes: delete, mode flip, file -> symlink, directory -> file.
    (root / "empty").unlink()
    os.chmod(root / "run.sh", 0o644)
    (root / "link").unlink()
    (root / "link").write_bytes(b"now a file\n")
    (root / "dir" / "deep" / "f.txt").unlink()
    (root / "dir" / "deep").rmdir()
    (root / "dir" / "deep").write_bytes(b"was a dir\n")
    got = files(store)
    assert got["run.sh"] == (Mode.FILE, b"#!/bin/sh\n")
    assert got["link"] == (Mode.FILE, b"now a file\n")
    assert got["dir/deep"] == (Mode.FILE, b"was a dir\n")
    assert "empty" not in got and "dir/deep/f.txt" not in got


def test_snapshot_is_stable_and_diffable(store):
    (store.root / "a.txt").write_text("one\n")
    (store.root / "b.txt").write_text("two\n")
    with store.lock():
        first = store.snapshot(Scope())
        assert store.snapshot(Scope()).tree == first.tree
        (store.root / "a.txt").write_text("ONE\n")
        (store.root / "b.txt").unlink()
        (store.root / "c.txt").write_text("three\n")
        second = store.snapshot(Scope())
    changes = store.diff_trees(first.tree, second.tree)
    assert (changes.added, changes.modified, changes.deleted) == (("c.txt",), ("a.txt",),
                                                                  ("b.txt",))
    assert not store.diff_trees(second.tree, second.tree)


def test_read_only_snapshot_leaves_the_cache_alone(store):
    (store.root / "a.txt").write_text("one\n")
    with store.lock():
        store.snapshot(Scope())
    cache = sorted(p.name for p in store.state_dir.iterdir())
    stamps = {p: p.stat().st_mtime_ns for p in store.state_dir.iterdir()}
    (store.root / "a.txt").write_text("two\n")
    snap = store.snapshot(Scope(), update_cache=False)
    assert {p: p.stat().st_mtime_ns for p in store.state_dir.iterdir()} == stamps
    assert sorted(p.name for p in store.state_dir.iterdir()) == cache
    with store.lock():
        assert store.snapshot(Scope()).tree == snap.tree
