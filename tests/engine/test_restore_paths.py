"""A restore of some paths reads those paths as they are and the rest as a watcher last saw
them: it writes what a restore over a full scan writes, its safety copy holds the restored
paths byte for byte (even a write a watcher's events never showed), and it undoes."""

from __future__ import annotations

import itertools
import mmap
import os
import time

import pytest
from conftest import service
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.engine.watch import Settings
from gitckpt.engine.why import TreeReader

_N = itertools.count()
FILES = ["a.txt", "src/b.txt", "src/deep/c.txt", "d.txt"]


def _files(root) -> dict[str, bytes | None]:
    return {f: (root / f).read_bytes() if (root / f).exists() else None for f in FILES}


def _put(root, content: dict[str, bytes | None]) -> None:
    for f, data in content.items():
        path = root / f
        if data is None:
            path.unlink(missing_ok=True)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)


VERSIONS = st.dictionaries(st.sampled_from(FILES),
                           st.one_of(st.none(), st.binary(min_size=1, max_size=40)),
                           min_size=1)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(steps=st.lists(VERSIONS, min_size=1, max_size=3), now=VERSIONS,
       paths=st.lists(st.sampled_from(["a.txt", "src", "src/deep/c.txt", "d.txt"]),
                      min_size=1, max_size=2, unique=True), k=st.integers(0, 3))
def test_a_restore_of_some_paths_writes_them_and_its_copy_holds_them(ws, steps, now, paths,
                                                                       k):
    """After random steps and unsaved edits, a restore of some paths to a random step: the
    named paths are the step's, every other file is as it was, the safety copy holds the
    named paths as they were, and restoring the copy (same paths) puts them back."""
    root = ws.root
    for f in FILES:
        (root / f).unlink(missing_ok=True)
    _put(root, {"a.txt": b"base\n"})
    task = service.init(root, f"paths {next(_N)}").save.task
    for i, content in enumerate(steps):
        _put(root, content)
        service.save(root, f"step {i}", task=task)
    tl = service.open_timeline(root)
    target = k % (tl.head(tl.resolve(task)).n + 1)
    _put(root, now)
    before = _files(root)
    out = service.restore(root, str(target), apply=True, confirm=True, paths=paths,
                          task=task)
    after = _files(root)
    reader = TreeReader(tl.store)
    tree = service.open_timeline(root).steps(tl.resolve(task))[target].tree

    def named(f: str) -> bool:
        return any(f == p or f.startswith(p + "/") for p in paths)

    for f in FILES:
        assert after[f] == (reader.blob(tree, f) if named(f) else before[f]), f
    if out.safety is None:
        assert after == before
        return
    copy = service.open_timeline(root).record(out.safety).tree
    for f in FILES:
        if named(f):
            assert reader.blob(copy, f) == before[f], f
    service.restore(root, out.safety[:12], apply=True, confirm=True, paths=paths, task=task)
    assert _files(root) == before


@pytest.mark.parametrize("ws", ["git"], indirect=True)
def test_a_write_no_event_showed_is_in_the_copy_of_the_path_restored(ws, monkeypatch):
    """With a watcher running, a write through mmap (no event) to the file restored is in
    the safety copy, and undoing the restore brings it back (the rotating re-check that
    would find it some saves later is held off: the restore must not wait for it)."""
    from gitckpt.store.git import hinted

    monkeypatch.setattr(hinted, "recheck", lambda scanner, p, memo, progress: memo.rotation)
    root = ws.root
    (root / "a.txt").write_bytes(b"first version\n")
    service.init(root, "mmap")
    (root / "a.txt").write_bytes(b"second version\n")
    old = time.time() - 3600  # not racily clean: the cache trusts its stat
    os.utime(root / "a.txt", (old, old))
    service.save(root, "two")
    session = service.watch(root, settings=Settings(quiet=3600.0, max_wait=3600.0,
                                                    poll=3600.0))
    try:
        from gitckpt.store import journal as journals

        journal = journals.for_root(str(ws.root.resolve()))
        assert journal is not None
        (root / "b.txt").write_bytes(b"seen\n")
        service.save(root, "three")  # the watcher's first look is done, its view trusted
        assert journal.looked
        with open(root / "a.txt", "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
            m[:6] = b"MAPPED"
            m.flush()
        mapped = (root / "a.txt").read_bytes()
        out = service.restore(root, "0", apply=True, confirm=True, paths=["a.txt"])
        assert (root / "a.txt").read_bytes() == b"first version\n"
        tl = service.open_timeline(root)
        assert TreeReader(tl.store).blob(tl.record(out.safety).tree, "a.txt") == mapped
        service.restore(root, out.safety[:12], apply=True, confirm=True, paths=["a.txt"])
        assert (root / "a.txt").read_bytes() == mapped
    finally:
        session.watcher.source.stop()
