"""A touch costs once: after every file's timestamps move with no content change (a checkout,
a formatter, `touch`), the next scan hashes them and refreshes their cache entries, so the
scan after it reads what a scan before the touch read (counted in bytes, not timed)."""

from __future__ import annotations

import os
import time

import pytest
from conftest import RepoGuard, git_tree, make_repo

from gitckpt.safety.scope import Scope
from gitckpt.store.discover import open_store
from gitckpt.store.git import libgit2, scan
from gitckpt.store.git import split as git_split


@pytest.fixture(params=["one thread", "two threads"])
def halves(request, monkeypatch):
    if request.param == "two threads":
        monkeypatch.setattr(git_split, "PARALLEL_MIN", 1)


def _age(files, seconds: float) -> None:
    then = time.time() - seconds
    for f in files:
        os.utime(f, (then, then))


def _snap(root):
    store = open_store(root)
    with store.lock():
        return store.snapshot(Scope.load(str(store.root), []))


def _reading(monkeypatch):
    """The bytes each full scan's diffs read, in order."""
    seen: list[int] = []
    real = scan.Scanner._hashed_unchanged

    def spy(self, deltas, read):
        seen.append(read)
        return real(self, deltas, read)

    monkeypatch.setattr(scan.Scanner, "_hashed_unchanged", spy)
    return seen


@pytest.mark.skipif(libgit2.thread_reads() is None, reason="no /proc/thread-self/io here")
def test_the_scan_after_a_touch_reads_as_before_it(tmp_path, monkeypatch, halves):
    root = make_repo(tmp_path / "repo")
    guard = RepoGuard(root)
    files = []
    for i in range(240):  # 9.6 MB: a diff that hashes them all reads more than the bar
        folder = root / "data" / f"d{i % 12}"
        folder.mkdir(parents=True, exist_ok=True)
        files.append(folder / f"f{i}.txt")
        files[-1].write_bytes(f"{i} ".encode() * 20_000)
    _age(files, 7200)  # older than the racy window, as files are between saves
    seen = _reading(monkeypatch)
    first = _snap(root)
    _snap(root)
    before = seen[-1]
    _age(files, 3600)  # every timestamp moves, no content does
    assert _snap(root).tree == first.tree  # the touched scan: hashes all, refreshes
    touched = seen[-1]
    assert touched > 9_000_000
    assert _snap(root).tree == first.tree
    after = seen[-1]
    assert after <= 1.2 * before + 65_536, (before, touched, after)
    # an edit after the refresh is still seen, and the tree is git's own
    (root / "data" / "d3" / "f3.txt").write_bytes(b"changed\n")
    assert _snap(root).tree == git_tree(root)
    guard.check(status_changes=True)


@pytest.mark.skipif(libgit2.thread_reads() is None, reason="no /proc/thread-self/io here")
def test_a_file_changed_during_the_refresh_is_taken_as_changed(tmp_path, monkeypatch):
    """The refresh hashes each touched file; one whose content differs from the cache by
    then is taken as a change, never given a fresh stat with its old content."""
    root = make_repo(tmp_path / "repo")
    files = [root / f"f{i}.txt" for i in range(120)]
    for i, f in enumerate(files):
        f.write_bytes(f"{i} ".encode() * 40_000)
    _age(files, 7200)
    _snap(root)
    _age(files, 3600)
    real = scan.Scanner._refresh

    def edit_then_refresh(self, p):
        (root / "f7.txt").write_bytes(b"edited while refreshing\n")
        return real(self, p)

    monkeypatch.setattr(scan.Scanner, "_refresh", edit_then_refresh)
    _snap(root)
    monkeypatch.undo()
    assert _snap(root).tree == git_tree(root)
