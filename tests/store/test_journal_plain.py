"""Plain folders through the journal: with a healthy watcher in the process, a snapshot lists
only the folders above what it saw, and every tree and every left-out path equals what a full
walk of the same files finds (the walk every plain-folder save made before)."""

from __future__ import annotations

import os
import time

import pytest
from conftest import make_plain, service
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_journal import EDITS, _unseen_edit, apply_edit, watched_task

from gitckpt.store import journal as journals
from gitckpt.store.plain import hinted

pytestmark = pytest.mark.slow


@pytest.fixture
def watched(hermetic, monkeypatch):
    monkeypatch.setattr(journals, "COOKIE_WAIT", 10.0)  # see test_journal.py
    root = make_plain(hermetic / "plain")
    session, journal = watched_task(root)
    yield root, journal
    session.watcher.source.stop()


def full_walk(root):
    """The tree and left-out paths of a walk of every folder, outside the journal."""
    tl = service.open_timeline(root)
    snap = tl.store.scan(tl.scope(tl.meta(tl.resolve(None))), update_cache=False)
    return snap.tree, sorted(s.path for s in snap.skipped)


def test_a_no_change_snapshot_lists_only_the_root_and_a_slice(watched):
    root, journal = watched
    first = service.save(root, "first").tree  # the full scan that makes the journal trusted
    assert journal.trusted
    assert journal.counts["full"] == 1
    assert service.save(root, "again").tree == first
    (root / "pkg" / "m1.py").write_text("x = 'changed'\n")
    result = service.save(root, "changed")
    assert (result.tree, sorted(s.path for s in result.skipped)) == full_walk(root)
    assert result.tree != first
    assert journal.counts == {"full": 1, "hinted": 2}


@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(EDITS, min_size=1, max_size=4))
def test_trusted_snapshots_equal_a_full_walk(watched, batches):
    root, journal = watched
    service.save(root, "trusted")
    before = journal.counts["hinted"]
    for batch in batches:
        for kind, n in batch:
            apply_edit(root, kind, n)
        result = service.save(root, "after edits")
        want = full_walk(root)
        assert (result.tree, sorted(s.path for s in result.skipped)) == want, (
            batch, service.open_timeline(root).store.diff_trees(want[0], result.tree).paths())
    assert journal.counts["hinted"] - before == len(batches)  # none fell back to a full scan


def test_a_changed_gitignore_makes_the_whole_walk(watched):
    root, _journal = watched
    service.save(root, "trusted")
    (root / "pkg" / "m5.log").write_text("a log, left out\n")
    (root / ".gitignore").write_text("build/\n")  # *.log no longer ignored
    result = service.save(root, "rules changed")
    assert result.tree == full_walk(root)[0]
    assert "pkg/m5.log" in service.open_timeline(root).store.diff_trees(
        service.log(root).steps[-2].tree, result.tree).paths()


def test_a_save_from_another_process_in_between_keeps_the_trees_exact(watched):
    from conftest import run_cli

    root, _journal = watched
    service.save(root, "trusted")  # its cache kept in memory
    (root / "pkg" / "other.txt").write_text("seen by the other process\n")
    assert run_cli("-C", str(root), "save", "from another process").code == 0
    (root / "pkg" / "m4.py").write_text("after the other save\n")
    assert service.save(root, "here again").tree == full_walk(root)[0]


@pytest.mark.parametrize("how", ["mmap", "hard_link"])
def test_what_no_event_shows_is_in_a_tree_within_the_bound(watched, tmp_path, how):
    root, journal = watched
    outside = tmp_path / "outside-link"
    os.link(root / "pkg" / "m3.py", outside)
    for f in (root / "pkg").iterdir():  # old enough that only a stat change says it moved
        os.utime(f, (time.time() - 3600, time.time() - 3600))
    service.save(root, "trusted")
    _unseen_edit(root, how, outside)
    want = full_walk(root)[0]
    for n in range(1, hinted.RECHECK_SAVES + 1):
        if service.save(root, f"save {n}").tree == want:
            break
    else:
        pytest.fail(f"not found in {hinted.RECHECK_SAVES} saves")
    assert journal.counts["full"] == 1  # found by the slices, not by a full scan
