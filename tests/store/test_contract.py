"""The store contract (store/base.py), run against every store implementation."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import filelock
import pytest
from conftest import git

from gitckpt.core.errors import RefMoved, StoreBusy, StoreCorrupt
from gitckpt.core.objects import (
    EMPTY_TREE,
    Mode,
    TreeEntry,
    encode_commit,
    encode_tree,
    hash_object,
)
from gitckpt.safety.scope import Scope
from gitckpt.store.base import Store
from gitckpt.store.discover import open_store
from gitckpt.store.notes import NOTES_REF
from gitckpt.store.package import PackageStore
from gitckpt.store.plain.store import CONFIG_TEXT, DirStore


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
    assert store.has_object(child)
    assert not store.has_object(hash_object("blob", b"nope"))


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
    assert "empty" not in got
    assert "dir/deep/f.txt" not in got


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


# -- helpers for the tests below ---------------------------------------------------------------

def package_store(root: Path) -> PackageStore:
    """A handoff package's bare repository, as an export lays it out."""
    store = PackageStore(root, root / "checkpoints.git")
    store.prepare()
    return store


ALL_STORES = {**STORES, "pkg": package_store}


@pytest.fixture(params=sorted(ALL_STORES))
def any_store(request, tmp_path) -> Store:
    """Every store, the handoff package's bare one too (objects, refs, notes, lock)."""
    return ALL_STORES[request.param](tmp_path / "ws")


@pytest.fixture
def pkg(tmp_path) -> PackageStore:
    return package_store(tmp_path / "pkg")


def reopen(store: Store) -> Store:
    """A second, fresh store object of the same folder."""
    if isinstance(store, PackageStore):
        return PackageStore(store.root, store.path)
    return open_store(store.root)


def durable(store: Store) -> None:
    """Put written objects in place (a plain store keeps them pending until a ref moves)."""
    if isinstance(store, DirStore):
        store.flush()


def loose(store: Store, oid: str) -> Path:
    return store.location / "objects" / oid[:2] / oid[2:]


def overwrite(path: Path, data: bytes) -> None:
    os.chmod(path, 0o600)  # git writes its loose objects read-only
    path.write_bytes(data)


def every_object(store: Store, kinds=("blob", "tree", "commit")) -> dict[str, tuple[str, bytes]]:
    """One object of each kind: kind -> (id, body)."""
    blob = b"content\n"
    tree = encode_tree([TreeEntry(b"f.txt", Mode.FILE, hash_object("blob", blob))])
    commit = encode_commit(hash_object("tree", tree), [], 1_700_000_000, "x\n")
    bodies = {"blob": blob, "tree": tree, "commit": commit}
    return {k: (store.write_object(k, bodies[k]), bodies[k]) for k in kinds}


def notes_root(store: Store) -> list[bytes]:
    """The names at the top of the notes tree."""
    return [e.name for e in store.read_tree(store.read_commit(store.get_ref(NOTES_REF)).tree)]


def folder_state(folder: Path) -> dict[str, tuple]:
    """Every entry below `folder`: kind and permissions, mtime, and a file's bytes."""
    out = {}
    for p in sorted(folder.rglob("*")):
        st = p.lstat()
        data = p.read_bytes() if p.is_file() and not p.is_symlink() else None
        out[p.relative_to(folder).as_posix()] = (st.st_mode, st.st_mtime_ns, data)
    return out


HOLD = ("import filelock, sys, time; l = filelock.FileLock(sys.argv[1]); l.acquire(); "
        "print('held', flush=True); time.sleep(30)")


@contextmanager
def held_by_another_process(store: Store) -> Iterator[None]:
    """The store's lock taken by another process (as another gitckpt writer takes it)."""
    with store.lock():
        pass  # the lock's folder exists now
    other = subprocess.Popen([sys.executable, "-c", HOLD, str(store.lock_path)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline().strip() == "held"
        yield
    finally:
        other.kill()
        other.wait()
        other.stdout.close()


# -- objects -----------------------------------------------------------------------------------

def test_write_object_and_read_object_round_trip_every_kind(any_store):
    for kind, (oid, body) in every_object(any_store).items():
        assert oid == hash_object(kind, body)
        assert any_store.read_object(oid) == (kind, body)
        assert any_store.write_object(kind, body) == oid  # idempotent
    durable(any_store)
    fresh = reopen(any_store)
    objs = every_object(fresh)
    for kind, (oid, body) in objs.items():
        assert fresh.read_object(oid) == (kind, body)
    blob, tree, commit = objs["blob"][0], objs["tree"][0], objs["commit"][0]
    assert fresh.read_blob(blob) == b"content\n"  # written as they are, read by kind
    assert fresh.read_tree(tree) == [TreeEntry(b"f.txt", Mode.FILE, blob)]
    c = fresh.read_commit(commit)
    assert (c.tree, c.parents, c.time, c.message) == (tree, (), 1_700_000_000, "x\n")


def test_objects_copied_between_stores_keep_their_ids(tmp_path):
    source = dir_store(tmp_path / "plain")
    blob = source.write_blob(b"copied\n")
    tree = source.write_tree([TreeEntry(b"c.txt", Mode.FILE, blob)])
    commit = source.write_commit(tree, [], "copy\n", 5)
    for target in (git_store(tmp_path / "repo"), package_store(tmp_path / "pkg")):
        for oid in (blob, tree, commit):
            assert target.write_object(*source.read_object(oid)) == oid
        assert target.read_commit(commit).tree == tree
        assert target.read_tree(tree) == [TreeEntry(b"c.txt", Mode.FILE, blob)]
        assert target.read_blob(blob) == b"copied\n"


def test_has_object(any_store):
    never = hash_object("blob", b"never written")
    assert not any_store.has_object(never)
    for oid, _ in every_object(any_store).values():
        assert any_store.has_object(oid)
    durable(any_store)
    for oid, _ in every_object(any_store).values():
        assert reopen(any_store).has_object(oid)
    assert not any_store.has_object(never)


def test_object_size_is_the_headers_loose_packed_or_pending(any_store):
    """The size comes from the object's header (a fetched or imported blob over the size
    limit is refused without being read); a missing object is StoreCorrupt."""
    objs = every_object(any_store)
    big = os.urandom(200_000)
    many = [any_store.write_blob(b"%d" % i) for i in range(300)]  # a plain store packs these
    oid = any_store.write_blob(big)
    for store in (any_store, durable(any_store) or reopen(any_store)):
        for kind, (o, body) in objs.items():
            assert store.object_size(o) == len(body), kind
        assert store.object_size(oid) == len(big)
        assert [store.object_size(o) for o in many[:3]] == [1, 1, 1]
        with pytest.raises(StoreCorrupt):
            store.object_size(hash_object("blob", b"never written"))


def test_object_problem_is_none_for_sound_objects_and_says_missing(any_store):
    objs = every_object(any_store)
    durable(any_store)
    for oid, _ in objs.values():
        assert any_store.object_problem(oid) is None
    problem = any_store.object_problem(hash_object("blob", b"never written"))
    assert isinstance(problem, str)
    assert "missing" in problem


TAMPERED = {
    "other content": zlib.compress(b"blob 5\0other"),
    "another kind": zlib.compress(b"tree 5\0hello"),
    "truncated": zlib.compress(b"blob 5\0hello")[:-5],
    "garbage": b"not zlib at all",
    # far more than its header says: inflated only as far as the header, never whole
    "longer than its header": zlib.compress(b"blob 5\0hello" + bytes(20 << 20)),
}


@pytest.mark.parametrize("damage", sorted(TAMPERED))
def test_a_tampered_object_is_a_problem_and_reads_are_store_corrupt(any_store, damage):
    oid = any_store.write_blob(b"hello")
    durable(any_store)
    overwrite(loose(any_store, oid), TAMPERED[damage])
    fresh = reopen(any_store)  # nothing read or checked yet
    problem = fresh.object_problem(oid)
    assert isinstance(problem, str)
    assert problem
    with pytest.raises(StoreCorrupt):
        fresh.read_blob(oid)
    with pytest.raises(StoreCorrupt):
        fresh.read_object(oid)


def test_reading_a_missing_or_another_kind_of_object_is_store_corrupt(any_store):
    for kind in ("blob", "tree", "commit"):
        missing = hash_object(kind, b"never written")
        for read in (any_store.read_blob, any_store.read_tree, any_store.read_commit,
                     any_store.read_object):
            with pytest.raises(StoreCorrupt):
                read(missing)
    reads = {"blob": any_store.read_blob, "tree": any_store.read_tree,
             "commit": any_store.read_commit}
    for kind, (oid, _) in every_object(any_store).items():
        for other, read in reads.items():
            if other != kind:
                with pytest.raises(StoreCorrupt):
                    read(oid)


def test_checkout_blob_of_a_plain_file_is_the_blob(store):
    data = b"line one\r\nline two\n\x00binary\xff"
    (store.root / "a.txt").write_bytes(data)
    with store.lock():
        snap = store.snapshot(Scope())
    entry = next(e for e in store.read_tree(snap.tree) if e.name == b"a.txt")
    assert entry.id == hash_object("blob", data)
    assert store.checkout_blob(entry.id, "a.txt") == data
    loose_blob = store.write_blob(b"no\nfilters\n")
    assert store.checkout_blob(loose_blob, "elsewhere/b.txt") == b"no\nfilters\n"


def test_git_checkout_blob_applies_line_endings_as_git_would(tmp_path):
    root = tmp_path / "ws"
    git_store(root)
    (root / ".gitattributes").write_text("*.txt text eol=crlf\n")
    store = open_store(root)
    with store.lock():
        store.snapshot(Scope())  # the scan finds the attributes file
    blob = store.write_blob(b"a\nb\n")
    assert store.checkout_blob(blob, "x.txt") == b"a\r\nb\r\n"
    assert store.checkout_blob(blob, "x.bin") == b"a\nb\n"
    assert store.read_blob(blob) == b"a\nb\n"


# -- refs --------------------------------------------------------------------------------------

def test_get_ref_of_a_missing_ref_is_none(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    for name in ("refs/checkpoints/t-0000/head", "refs/checkpoints/nowhere/steps/3", NOTES_REF):
        assert any_store.get_ref(name) is None
    with any_store.lock():
        any_store.create_ref("refs/checkpoints/t-0000/head", a)
    assert any_store.get_ref("refs/checkpoints/t-0000/steps/0") is None
    assert any_store.get_ref("refs/checkpoints/t-0000/head") == a


def test_create_ref_twice_is_ref_moved_even_at_the_same_id(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = any_store.write_commit(EMPTY_TREE, [a], "b\n", 2)
    name = "refs/checkpoints/t-0000/steps/0"
    with any_store.lock():
        any_store.create_ref(name, a)
        for again in (a, b):
            with pytest.raises(RefMoved):
                any_store.create_ref(name, again)
    assert any_store.get_ref(name) == a
    assert reopen(any_store).get_ref(name) == a


def test_cas_ref_moves_only_from_the_expected_value(any_store):
    a, b, c = (any_store.write_commit(EMPTY_TREE, [], f"{m}\n", i)
               for i, m in enumerate("abc", 1))
    name = "refs/checkpoints/t-0000/head"
    with any_store.lock():
        with pytest.raises(RefMoved):
            any_store.cas_ref(name, a, b)  # expected b, but it does not exist
        assert any_store.get_ref(name) is None
        any_store.cas_ref(name, a, None)
        any_store.cas_ref(name, b, a)
        for stale in (None, a, c):
            with pytest.raises(RefMoved):
                any_store.cas_ref(name, c, stale)
            assert any_store.get_ref(name) == b
        any_store.cas_ref(name, c, b)
        any_store.cas_ref(name, c, c)  # to where it is: fine
    assert reopen(any_store).get_ref(name) == c


def test_delete_ref_with_the_right_old_value(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    head, step = "refs/checkpoints/t-0000/head", "refs/checkpoints/t-0000/steps/0"
    with any_store.lock():
        any_store.create_ref(head, a)
        any_store.create_ref(step, a)
        any_store.delete_ref(step, a)
        assert any_store.get_ref(step) is None
        assert any_store.list_refs("refs/checkpoints/") == {head: a}
        any_store.delete_ref(head, a)
        assert any_store.list_refs("refs/checkpoints/") == {}
    fresh = reopen(any_store)
    assert fresh.list_refs("refs/checkpoints/") == {}
    with fresh.lock():
        fresh.create_ref(step, a)  # a deleted ref can be made again
    assert fresh.list_refs("refs/checkpoints/") == {step: a}


@pytest.mark.parametrize("kind", ["dir", "git", "pkg"])
def test_a_deleted_ref_can_be_created_again_by_the_same_store(tmp_path, kind):
    # DirStore once forgot that delete_ref removed the emptied ref folders (ENOENT next time)
    store = ALL_STORES[kind](tmp_path / "ws")
    a = store.write_commit(EMPTY_TREE, [], "a\n", 1)
    name = "refs/checkpoints/t-0000/steps/0"
    with store.lock():
        store.create_ref(name, a)
        store.delete_ref(name, a)
        store.create_ref(name, a)
    assert store.list_refs("refs/checkpoints/") == {name: a}


def test_delete_ref_with_a_wrong_old_value_is_ref_moved(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = any_store.write_commit(EMPTY_TREE, [a], "b\n", 2)
    name = "refs/checkpoints/t-0000/head"
    with any_store.lock():
        with pytest.raises(RefMoved):
            any_store.delete_ref(name, a)  # does not exist
        any_store.create_ref(name, a)
        with pytest.raises(RefMoved):
            any_store.delete_ref(name, b)
    assert any_store.get_ref(name) == a


def test_list_refs_by_prefix(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = any_store.write_commit(EMPTY_TREE, [a], "b\n", 2)
    refs = {"refs/checkpoints/t-0000/head": b, "refs/checkpoints/t-0000/steps/0": a,
            "refs/checkpoints/t-0000/steps/1": b, "refs/checkpoints/t-0001/head": a}
    assert any_store.list_refs("refs/checkpoints/") == {}
    with any_store.lock():
        for name, oid in refs.items():
            any_store.create_ref(name, oid)
        any_store.write_note(a, "n")
    notes = any_store.get_ref(NOTES_REF)
    assert any_store.list_refs("refs/checkpoints/") == refs
    assert any_store.list_refs("refs/checkpoints/t-0000/steps/") == {
        k: v for k, v in refs.items() if "/steps/" in k}
    assert any_store.list_refs("refs/checkpoints/t-0001/") == {"refs/checkpoints/t-0001/head": a}
    assert any_store.list_refs("refs/checkpoints/t-000") == refs  # a string prefix
    assert any_store.list_refs("refs/checkpoints/t-0002/") == {}
    assert any_store.list_refs("refs/notes/") == {NOTES_REF: notes}
    assert any_store.list_refs("refs/") == {**refs, NOTES_REF: notes}


DAMAGED_REF = "refs/checkpoints/t-0000/head"
GARBAGE = {
    "garbage": b"garbage\n",
    "40 characters": b"z" * 40 + b"\n",  # as long as an id, but none
}


def plant_damaged_ref(store: Store, garbage: bytes) -> dict[str, str]:
    """A good ref beside a ref file holding `garbage`, written by hand; the good refs."""
    a = store.write_commit(EMPTY_TREE, [], "a\n", 1)
    good = {"refs/checkpoints/t-0000/steps/0": a, "refs/checkpoints/t-0001/head": a}
    with store.lock():
        for name, oid in good.items():
            store.create_ref(name, oid)
    (store.refs_folder / DAMAGED_REF).write_bytes(garbage)
    return good


# DirStore once took any 40 characters for an object id, and GitStore left a damaged ref
# out of list_refs in silence unless asked for `damaged`.
@pytest.mark.parametrize(("kind", "damage"), [
    ("git", "garbage"), ("git", "40 characters"), ("dir", "garbage"),
    ("dir", "40 characters")])
def test_list_refs_puts_a_damaged_ref_in_damaged(tmp_path, kind, damage):
    store = STORES[kind](tmp_path / "ws")
    good = plant_damaged_ref(store, GARBAGE[damage])
    damaged: list[str] = []
    assert store.list_refs("refs/checkpoints/", damaged) == good
    assert damaged == [DAMAGED_REF]
    other: list[str] = []
    assert store.list_refs("refs/checkpoints/t-0001/", other) == {
        "refs/checkpoints/t-0001/head": good["refs/checkpoints/t-0001/head"]}
    assert other == []  # outside the prefix: not reported


@pytest.mark.parametrize(("kind", "damage"), [
    ("git", "garbage"), ("git", "40 characters"), ("dir", "garbage"),
    ("dir", "40 characters")])
def test_list_refs_without_damaged_raises_store_corrupt(tmp_path, kind, damage):
    store = STORES[kind](tmp_path / "ws")
    plant_damaged_ref(store, GARBAGE[damage])
    with pytest.raises(StoreCorrupt):
        store.list_refs("refs/checkpoints/")


def test_packed_refs_are_refs_too(store):
    a = store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = store.write_commit(EMPTY_TREE, [a], "b\n", 2)
    head, step = "refs/checkpoints/t-0000/head", "refs/checkpoints/t-0000/steps/0"
    with store.lock():
        store.create_ref(head, a)
        store.create_ref(step, a)
    git(store.root, f"--git-dir={store.location}", "pack-refs", "--all")
    assert not (store.refs_folder / head).exists()  # packed now
    fresh = reopen(store)
    assert fresh.get_ref(head) == a
    assert fresh.list_refs("refs/checkpoints/") == {head: a, step: a}
    with fresh.lock():
        with pytest.raises(RefMoved):
            fresh.create_ref(head, b)
        fresh.cas_ref(head, b, a)
        fresh.delete_ref(step, a)
    assert reopen(store).list_refs("refs/checkpoints/") == {head: b}


# -- notes -------------------------------------------------------------------------------------

def test_read_note_of_a_commit_without_one_is_none(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = any_store.write_commit(EMPTY_TREE, [], "b\n", 2)
    assert any_store.get_ref(NOTES_REF) is None
    assert any_store.read_note(a) is None
    with any_store.lock():
        any_store.write_note(a, "only a")
    assert any_store.read_note(b) is None
    assert any_store.read_note(a) == "only a"


def commits_in_one_fan(store: Store) -> tuple[str, str]:
    """Two commits whose ids share their first two hex digits (one fan-out folder)."""
    seen: dict[str, int] = {}
    for t in range(1, 10_000):
        oid = hash_object("commit", encode_commit(EMPTY_TREE, [], t, "c\n"))
        if oid[:2] in seen:
            pair = tuple(store.write_commit(EMPTY_TREE, [], "c\n", x) for x in (seen[oid[:2]], t))
            assert pair[1] == oid
            return pair
        seen[oid[:2]] = t
    raise AssertionError("no two commits in one fan")


def test_overwriting_and_removing_notes_keeps_the_neighbours(any_store):
    a, b = commits_in_one_fan(any_store)
    with any_store.lock():
        any_store.write_note(a, "a1")
        any_store.write_note(b, "b1")
        any_store.write_note(a, "a2")
    assert (any_store.read_note(a), any_store.read_note(b)) == ("a2", "b1")
    assert notes_root(any_store) == [a[:2].encode()]
    with any_store.lock():
        any_store.update_notes({a: None})
    assert (any_store.read_note(a), any_store.read_note(b)) == (None, "b1")
    with any_store.lock():
        any_store.update_notes({b: None})
    assert any_store.read_note(b) is None
    assert notes_root(any_store) == []  # an emptied fan-out folder goes


def test_update_notes_sets_and_removes_many_in_one_commit(any_store):
    a, b, c, d = (any_store.write_commit(EMPTY_TREE, [], f"{m}\n", i)
                  for i, m in enumerate("abcd", 1))
    with any_store.lock():
        any_store.update_notes({})
        assert any_store.get_ref(NOTES_REF) is None
        any_store.update_notes({a: "A", b: "B", c: "C"})
        before = any_store.get_ref(NOTES_REF)
        any_store.update_notes({a: None, b: "B2", d: "D"}, message="several\n")
    after = any_store.get_ref(NOTES_REF)
    notes_commit = any_store.read_commit(after)
    assert (notes_commit.parents, notes_commit.message) == ((before,), "several\n")
    for store in (any_store, reopen(any_store)):
        assert [store.read_note(x) for x in (a, b, c, d)] == [None, "B2", "C", "D"]
    with any_store.lock():
        any_store.update_notes({})  # no changes: no notes commit
    assert any_store.get_ref(NOTES_REF) == after


def test_notes_survive_a_fresh_open(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = any_store.write_commit(EMPTY_TREE, [], "b\n", 2)
    with any_store.lock():
        any_store.write_note(a, '{"schema": 1}')
        any_store.write_note(b, "ünïcode ✓")
        any_store.update_notes({a: '{"schema": 2}'})
    fresh = reopen(any_store)
    assert fresh.read_note(a) == '{"schema": 2}'
    assert fresh.read_note(b) == "ünïcode ✓"


def test_notes_written_through_another_store_object_are_read(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = any_store.write_commit(EMPTY_TREE, [], "b\n", 2)
    with any_store.lock():
        any_store.write_note(a, "first")
    assert any_store.read_note(a) == "first"  # its notes tree is cached now
    other = reopen(any_store)
    with other.lock():
        other.write_note(b, "second")
        other.write_note(a, "rewritten")
    assert (any_store.read_note(a), any_store.read_note(b)) == ("rewritten", "second")
    with any_store.lock():
        any_store.update_notes({b: None})  # on top of the other writer's notes
    assert (other.read_note(a), other.read_note(b)) == ("rewritten", None)


def test_flat_notes_are_read_and_fanned_out_when_written(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    b = any_store.write_commit(EMPTY_TREE, [], "b\n", 2)
    flat = any_store.write_tree([TreeEntry(a.encode(), Mode.FILE, any_store.write_blob(b"flat"))])
    with any_store.lock():  # as `git notes add` writes a small notes tree
        any_store.cas_ref(NOTES_REF, any_store.write_commit(flat, [], "Notes added\n", 1), None)
    assert any_store.read_note(a) == "flat"
    with any_store.lock():
        any_store.write_note(b, "fanned")
    assert (any_store.read_note(a), any_store.read_note(b)) == ("flat", "fanned")
    with any_store.lock():
        any_store.write_note(a, "moved")
    assert a.encode() not in notes_root(any_store)
    assert (any_store.read_note(a), any_store.read_note(b)) == ("moved", "fanned")


# -- the lock ----------------------------------------------------------------------------------

def in_thread(fn):
    """fn() run in another thread of this process; its result or its exception."""
    out = {}

    def body():
        try:
            out["value"] = fn()
        except BaseException as e:  # handed back to the test
            out["error"] = e

    t = threading.Thread(target=body)
    t.start()
    t.join(10)
    if "error" in out:
        raise out["error"]
    return out["value"]


def test_the_lock_is_reentrant_in_a_thread_and_excludes_other_threads(any_store):
    other = reopen(any_store)  # the same store opened again, in this process

    def busy(store):
        try:
            with store.lock(timeout=0.1):
                return False
        except StoreBusy:
            return True

    with any_store.lock():
        with any_store.lock(timeout=0):
            assert not any_store.lock_held_elsewhere()
        with other.lock(timeout=0):  # a call that opens the workspace again re-enters
            assert not other.lock_held_elsewhere()
        assert in_thread(other.lock_held_elsewhere)  # the outer hold stands
        assert in_thread(lambda: busy(other))
        assert in_thread(lambda: busy(any_store))
    assert not in_thread(other.lock_held_elsewhere)
    assert not in_thread(lambda: busy(other))

    holding, release = threading.Event(), threading.Event()

    def hold():
        with other.lock(timeout=0):
            holding.set()
            release.wait(10)

    t = threading.Thread(target=hold)
    t.start()
    try:
        assert holding.wait(10)
        assert any_store.lock_held_elsewhere()
        assert busy(any_store)
    finally:
        release.set()
        t.join(10)
    assert not any_store.lock_held_elsewhere()


@pytest.mark.slow
def test_a_lock_held_by_another_process_is_store_busy(store):
    assert not store.lock_held_elsewhere()
    with held_by_another_process(store):
        assert store.lock_held_elsewhere()
        started = time.monotonic()
        with pytest.raises(StoreBusy), store.lock(timeout=0.2):
            pass
        assert time.monotonic() - started >= 0.15
        assert store.lock_held_elsewhere()
    assert not store.lock_held_elsewhere()
    with store.lock(timeout=0.2):
        pass


@pytest.mark.slow
def test_the_default_lock_timeout_is_gitckpt_lock_timeout(store, monkeypatch):
    monkeypatch.setenv("GITCKPT_LOCK_TIMEOUT", "0.1")
    with held_by_another_process(store):
        with pytest.raises(StoreBusy) as e, store.lock():
            pass
        assert "0.1s" in e.value.message  # not the 30 s default


def test_lock_held_elsewhere_is_false_when_nobody_holds_it(tmp_path):
    for store in (git_store(tmp_path / "repo"), dir_store(tmp_path / "plain"),
                  package_store(tmp_path / "pkg")):
        assert not store.lock_held_elsewhere()  # before the lock file exists
        with store.lock():
            assert not store.lock_held_elsewhere()  # we hold it ourselves
        assert not store.lock_held_elsewhere()
        probe = filelock.FileLock(str(store.lock_path))
        probe.acquire(timeout=0)  # released: anyone can take it
        probe.release()


# -- prepare, snapshots, ignore rules ----------------------------------------------------------

def test_prepare_twice_changes_nothing(any_store):
    a = any_store.write_commit(EMPTY_TREE, [], "a\n", 1)
    any_store.prepare()
    with any_store.lock():
        any_store.create_ref("refs/checkpoints/t-0000/head", a)
        any_store.write_note(a, "kept")
    before = folder_state(any_store.location)
    any_store.prepare()
    any_store.prepare()
    assert folder_state(any_store.location) == before
    fresh = reopen(any_store)
    fresh.prepare()
    assert folder_state(any_store.location) == before
    assert fresh.get_ref("refs/checkpoints/t-0000/head") == a
    assert fresh.read_note(a) == "kept"


def test_a_file_that_vanishes_during_a_snapshot_is_left_out(store):
    (store.root / "keep.txt").write_text("keep\n")
    (store.root / "gone.txt").write_text("gone\n")
    seen = []

    def vanish(rel: str) -> None:
        seen.append(rel)
        if rel == "gone.txt":
            (store.root / "gone.txt").unlink()

    with store.lock():
        snap = store.snapshot(Scope(), progress=vanish)
        again = store.snapshot(Scope())
    assert "gone.txt" in seen
    keep = TreeEntry(b"keep.txt", Mode.FILE, hash_object("blob", b"keep\n"))
    assert store.read_tree(snap.tree) == [keep]
    assert snap.skipped == ()
    assert again.tree == snap.tree


def test_a_folder_that_vanished_since_the_last_snapshot(store):
    (store.root / "keep.txt").write_text("keep\n")
    (store.root / "d" / "e").mkdir(parents=True)
    (store.root / "d" / "e" / "f.txt").write_text("f\n")
    with store.lock():
        first = store.snapshot(Scope())
        (store.root / "d" / "e" / "f.txt").unlink()
        (store.root / "d" / "e").rmdir()
        (store.root / "d").rmdir()
        second = store.snapshot(Scope())
    assert store.diff_trees(first.tree, second.tree).deleted == ("d/e/f.txt",)
    assert files(store) == {"keep.txt": (Mode.FILE, b"keep\n")}


def test_a_read_only_snapshot_equals_a_normal_one(store):
    (store.root / "a.txt").write_text("one\n")
    (store.root / "sub").mkdir()
    (store.root / "sub" / "b.txt").write_text("two\n")
    (store.root / ".env").write_text("API_KEY=abc\n")  # sensitive: listed in `skipped`
    read_only = store.snapshot(Scope(), update_cache=False)  # no cache yet
    with store.lock():
        normal = store.snapshot(Scope())
    assert read_only == normal
    assert [s.path for s in normal.skipped] == [".env"]
    (store.root / "a.txt").write_text("changed\n")
    (store.root / "sub" / "b.txt").unlink()
    read_only = store.snapshot(Scope(), update_cache=False)  # with a cache that is behind
    with store.lock():
        assert store.snapshot(Scope()) == read_only
    assert read_only.tree != normal.tree


def test_diff_trees_names_every_changed_file(any_store):
    one, two = any_store.write_blob(b"1\n"), any_store.write_blob(b"2\n")

    def tree(**entries) -> str:
        return any_store.write_tree([TreeEntry(k.encode(), m, i) for k, (m, i) in entries.items()])

    old = tree(a=(Mode.FILE, one), run=(Mode.FILE, one), link=(Mode.FILE, one),
               f=(Mode.FILE, one), same=(Mode.FILE, one),
               d=(Mode.TREE, tree(x=(Mode.FILE, one), y=(Mode.FILE, one))))
    new = tree(a=(Mode.FILE, two), run=(Mode.EXECUTABLE, one), link=(Mode.SYMLINK, one),
               f=(Mode.TREE, tree(g=(Mode.FILE, one))), same=(Mode.FILE, one),
               n=(Mode.FILE, one),
               d=(Mode.TREE, tree(x=(Mode.FILE, one), z=(Mode.FILE, one))))
    changes = any_store.diff_trees(old, new)
    assert changes.added == ("d/z", "f/g", "n")
    assert changes.modified == ("a", "link", "run")
    assert changes.deleted == ("d/y", "f")
    everything = ("a", "d/x", "d/y", "f", "link", "run", "same")
    assert any_store.diff_trees(EMPTY_TREE, old).added == everything
    assert any_store.diff_trees(old, EMPTY_TREE).deleted == everything
    assert not any_store.diff_trees(old, old)


def test_ignore_check_follows_gitignore_as_snapshots_do(store):
    (store.root / ".gitignore").write_text("*.log\nout/\n!keep.log\n")
    paths = ["a.txt", "debug.log", "keep.log", "sub/x.log", "sub/z.txt", "out/y.txt"]
    for rel in paths:
        (store.root / rel).parent.mkdir(parents=True, exist_ok=True)
        (store.root / rel).write_text(rel + "\n")
    ignored = store.ignore_check()
    assert {rel for rel in paths if ignored(rel)} == {"debug.log", "sub/x.log", "out/y.txt"}
    assert not ignored(".gitignore")
    assert set(files(store)) == {rel for rel in [*paths, ".gitignore"] if not ignored(rel)}


# -- prune and stale locks ---------------------------------------------------------------------

@pytest.mark.parametrize("make", [dir_store, package_store], ids=["dir", "pkg"])
def test_dir_prune_deletes_the_unreachable_loose_objects(tmp_path, make):
    store = make(tmp_path / "ws")
    keep, drop = store.write_blob(b"keep"), store.write_blob(b"drop")
    tree = store.write_tree([TreeEntry(b"k", Mode.FILE, keep)])
    durable(store)
    size = loose(store, drop).stat().st_size
    with store.lock():
        assert store.prune(lambda: {keep, tree}) == size
    assert store.has_object(keep)
    assert store.has_object(tree)
    assert not store.has_object(drop)
    assert not loose(store, drop).exists()
    with pytest.raises(StoreCorrupt):
        store.read_blob(drop)
    with store.lock():
        assert store.prune(lambda: {keep, tree}) == 0  # nothing left to free
    assert store.read_blob(keep) == b"keep"


def test_dir_prune_deletes_unreachable_objects_not_yet_in_place(tmp_path):
    # an object written but not yet flushed once escaped the prune and landed on disk later
    store = dir_store(tmp_path / "ws")
    drop = store.write_blob(b"written, not yet durable")
    with store.lock():
        store.prune(lambda: set())
    assert not store.has_object(drop)


def test_git_prune_leaves_garbage_to_git(tmp_path):
    store = git_store(tmp_path / "ws")
    blob = store.write_blob(b"unreachable")
    asked = []
    with store.lock():
        assert store.prune(lambda: asked.append(1) or set()) is None
    assert asked == []  # reachable() is called only by a store that prunes
    assert store.has_object(blob)
    assert store.read_blob(blob) == b"unreachable"


def test_a_snapshot_after_prune_reads_its_files_again(store):
    (store.root / "a.txt").write_text("one\n")
    (store.root / "d").mkdir()
    (store.root / "d" / "b.txt").write_text("two\n")
    past = time.time() - 120  # old files: the stat cache trusts them without reading
    for f in ("a.txt", "d/b.txt"):
        os.utime(store.root / f, (past, past))
    with store.lock():
        first = store.snapshot(Scope())
        store.prune(lambda: set())  # the stat cache may name nothing that is gone
        second = store.snapshot(Scope())
    assert second.tree == first.tree
    assert files(store) == {"a.txt": (Mode.FILE, b"one\n"), "d/b.txt": (Mode.FILE, b"two\n")}


def test_stale_locks_lists_old_ref_lock_files_only(any_store):
    store = any_store
    assert isinstance(store.refs_folder, Path)
    assert store.refs_folder.is_dir()
    assert store.stale_locks(0) == []
    a = store.write_commit(EMPTY_TREE, [], "a\n", 1)
    with store.lock():
        store.create_ref("refs/checkpoints/t-0000/head", a)
    refs = store.refs_folder / "refs" / "checkpoints"
    assert (refs / "t-0000" / "head").read_text().strip() == a  # the loose refs are there
    old_lock, fresh_lock = refs / "t-0000" / "head.lock", refs / "t-0001" / "head.lock"
    fresh_lock.parent.mkdir()
    old_lock.write_text(f"{a}\n")
    fresh_lock.write_text(f"{a}\n")
    past = time.time() - 120
    os.utime(old_lock, (past, past))
    os.utime(refs / "t-0000" / "head", (past, past))  # an old ref, not a lock
    assert store.stale_locks(60) == [old_lock]
    assert store.stale_locks(600) == []
    assert old_lock.exists()
    assert fresh_lock.exists()


# -- the handoff package's store ---------------------------------------------------------------

def test_package_check_shape_passes_as_an_export_writes_it(pkg):
    assert pkg.check_shape("bad package") is None
    a = pkg.write_commit(EMPTY_TREE, [], "a\n", 1)
    with pkg.lock():
        pkg.create_ref("refs/checkpoints/t-0000/head", a)
        pkg.write_note(a, "note")
    pkg.check_shape("bad package")
    assert not (pkg.root / ".gitckpt").exists()  # bare: no pointer file beside it


SHAPE_DAMAGE = {
    "config changed": lambda p: (p / "config").write_text(CONFIG_TEXT + "[core]\n\tpager = x\n"),
    "config missing": lambda p: (p / "config").unlink(),
    "alternates": lambda p: (p / "objects/info/alternates").write_text("/elsewhere/objects\n"),
    "alternates link": lambda p: os.symlink("/nonexistent", p / "objects/info/alternates"),
    "a pack": lambda p: (p / "objects/pack/pack-1.pack").write_bytes(b"PACK"),
}


@pytest.mark.parametrize("damage", sorted(SHAPE_DAMAGE))
def test_package_check_shape_refuses_another_shape(pkg, damage):
    SHAPE_DAMAGE[damage](pkg.path)
    with pytest.raises(StoreCorrupt) as e:
        pkg.check_shape("bad package")
    assert e.value.hint == "bad package"


def test_package_read_checked_returns_kind_and_body(pkg):
    objs = every_object(pkg)
    pkg.flush()
    for kind, (oid, body) in objs.items():
        assert pkg.read_checked(oid, "bad package") == (kind, body)
    assert sorted(pkg.object_ids()) == sorted(oid for oid, _ in objs.values())


def test_package_read_checked_of_a_missing_object_is_store_corrupt(pkg):
    pkg.write_blob(b"present")
    pkg.flush()
    with pytest.raises(StoreCorrupt) as e:
        pkg.read_checked(hash_object("blob", b"absent"), "bad package")
    assert e.value.hint == "bad package"


@pytest.mark.parametrize("damage", sorted(TAMPERED))
def test_package_read_checked_refuses_a_tampered_object(pkg, damage):
    oid = pkg.write_blob(b"hello")
    pkg.flush()
    overwrite(loose(pkg, oid), TAMPERED[damage])
    fresh = PackageStore(pkg.root, pkg.path)
    with pytest.raises(StoreCorrupt):
        fresh.read_checked(oid, "bad package")
