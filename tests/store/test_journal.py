"""Saves that cost what changed: with a healthy watcher in the process, a snapshot visits
only the paths it saw, and every tree equals git's own of the same files."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from conftest import RepoGuard, git, git_tree, make_repo, service
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gitckpt.engine.watch import Settings
from gitckpt.safety.sensitive import is_sensitive
from gitckpt.store import journal as journals

pytestmark = pytest.mark.slow

QUIET = Settings(quiet=3600.0, max_wait=3600.0, poll=3600.0)  # the test takes every snapshot


def start_watch(root: Path):
    """A watcher on `root` in this process, its journal trusted after one full scan."""
    session = service.watch(root, settings=QUIET)
    if session.watcher.mode != "events":
        session.stop()
        pytest.skip("no file events on this machine")
    journal = journals.for_root(str(root))
    assert journal is not None
    return session, journal


@pytest.fixture
def watched(tmp_path, monkeypatch):
    # A loaded machine may take longer than the default 0.5 s to deliver the cookie's event;
    # then a snapshot is a full scan, which is right but not what these tests look at.
    monkeypatch.setattr(journals, "COOKIE_WAIT", 10.0)
    root = make_repo(tmp_path / "repo")
    guard = RepoGuard(root)
    session, journal = watched_task(root)
    yield root, journal
    session.watcher.source.stop()
    guard.check(status_changes=True)


def watched_task(root: Path):
    """Six modules in `pkg/`, a task, and a watcher on `root` whose journal is trusted."""
    (root / "pkg").mkdir()
    for i in range(6):
        (root / "pkg" / f"m{i}.py").write_text(f"x = {i}\n")
    service.init(root, "watched")
    return start_watch(root)


def live_tree(root) -> str:
    tl = service.open_timeline(root)
    return tl.live(tl.meta(tl.resolve(None))).tree


def test_a_no_change_snapshot_visits_nothing_once_trusted(watched):
    root, journal = watched
    first = live_tree(root)  # the full scan that makes the journal trusted
    assert journal.trusted
    assert journal.counts["full"] == 1
    assert live_tree(root) == first
    assert journal.counts["hinted"] == 1
    (root / "pkg" / "m1.py").write_text("x = 'changed'\n")
    assert live_tree(root) == git_tree(root) != first
    assert journal.counts == {"full": 1, "hinted": 2}


def test_an_edit_that_restores_the_mtime_is_seen(watched):
    root, journal = watched
    live_tree(root)
    f = root / "pkg" / "m2.py"
    st_before = f.stat()
    f.write_text("y = 2\n")  # the same size
    os.utime(f, ns=(st_before.st_atime_ns, st_before.st_mtime_ns))
    assert live_tree(root) == git_tree(root)
    assert journal.counts["hinted"] >= 1


def test_a_lost_event_means_a_full_scan(watched):
    root, journal = watched
    live_tree(root)
    journal.lost("event queue overflow (simulated)")
    (root / "pkg" / "m3.py").write_text("z = 3\n")
    assert live_tree(root) == git_tree(root)
    assert journal.counts["full"] == 2
    assert journal.trusted


def test_no_cookie_no_trust(watched, monkeypatch):
    root, journal = watched
    live_tree(root)
    monkeypatch.setattr(journals, "COOKIE_WAIT", 0.0)
    monkeypatch.setattr(journal, "arrived", set())
    saw = journal.saw
    monkeypatch.setattr(journal, "saw", lambda paths: saw(
        [p for p in paths if journals.COOKIE not in p]))  # the cookie's event never comes
    full = journal.counts["full"]
    live_tree(root)
    assert journal.counts["full"] == full + 1


def test_a_verification_scan_is_due_after_its_interval(watched):
    root, journal = watched
    live_tree(root)
    journal.full_due = time.monotonic() - 1
    assert journal.full_due_now()
    live_tree(root)
    assert journal.counts["full"] == 2
    assert not journal.full_due_now()


EDITS = st.lists(st.tuples(
    st.sampled_from(["write", "same_size_keep_mtime", "delete", "rename", "rmtree",
                     "file_to_folder", "folder_to_file", "new_tree", "ignored", "ignored_dir",
                     "nested_repo", "sensitive"]),
    st.integers(0, 9)), min_size=1, max_size=6)


def apply_edit(root, kind: str, n: int) -> None:
    """One edit; one that the files as they are now make impossible is skipped."""
    try:
        _edit(root, kind, n)
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, FileExistsError):
        pass


def _edit(root, kind: str, n: int) -> None:  # noqa: C901 (baseline)
    pkg = root / "pkg"
    files = sorted(p for p in pkg.rglob("*") if p.is_file() and ".git" not in p.parts
                   and not is_sensitive(str(p.relative_to(root)))) if pkg.exists() else []
    target = files[n % len(files)] if files else None
    if kind == "write" or target is None:
        new = pkg / f"w{n}.py"
        new.parent.mkdir(parents=True, exist_ok=True)
        if new.is_dir():
            shutil.rmtree(new)
        new.write_text(f"w = {n} {time.monotonic_ns()}\n")
    elif kind == "same_size_keep_mtime":
        st_ = target.stat()
        data = target.read_bytes()
        target.write_bytes(bytes(reversed(data)) if data[::-1] != data else data + b"#")
        os.utime(target, ns=(st_.st_atime_ns, st_.st_mtime_ns))
    elif kind == "delete":
        target.unlink()
    elif kind == "rename":
        dest = target.with_name(f"renamed{n}_{target.name}")
        if dest.is_dir():
            shutil.rmtree(dest)
        target.rename(dest)
    elif kind == "rmtree":
        if target.parent != pkg:
            shutil.rmtree(target.parent)
        else:
            shutil.rmtree(pkg)
    elif kind == "file_to_folder":
        target.unlink()
        target.mkdir()
        (target / "inner.txt").write_text("now a folder\n")
    elif kind == "folder_to_file":
        sub = pkg / f"d{n}"
        if sub.is_dir():
            shutil.rmtree(sub)
            sub.write_text("now a file\n")
        else:
            (sub / "deep" / "er").mkdir(parents=True)
            (sub / "deep" / "er" / "f.txt").write_text(f"{n}\n")
    elif kind == "new_tree":
        if (pkg / f"t{n}").is_file():
            (pkg / f"t{n}").unlink()
        for i in range(3):
            d = pkg / f"t{n}" / f"s{i}"
            d.mkdir(parents=True, exist_ok=True)
            (d / "f.md").write_text(f"{n} {i}\n")
    elif kind == "ignored":
        (root / f"debug{n}.log").write_text("ignored by .gitignore\n")
    elif kind == "ignored_dir":
        (root / "build" / f"o{n}").mkdir(parents=True, exist_ok=True)
        (root / "build" / f"o{n}" / "out.bin").write_bytes(b"built\n")
    elif kind == "sensitive":
        (pkg / f"e{n}").mkdir(parents=True, exist_ok=True)
        (pkg / f"e{n}" / ".env").write_text("API_KEY=not-in-any-tree\n")
    elif kind == "nested_repo":
        sub = pkg / f"vendor{n}"
        if not (sub / ".git").exists():
            sub.mkdir(parents=True, exist_ok=True)
            (sub / "lib.c").write_text("int x;\n")
            git(sub, "init", "-q")
            git(sub, "add", "-A")
            git(sub, "commit", "-q", "-m", "vendored")
        else:
            (sub / "lib.c").write_text(f"int x = {n};\n")
            git(sub, "commit", "-q", "-am", "moved on", check=False)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(EDITS, min_size=1, max_size=4))
def test_trusted_snapshots_equal_gits_tree(watched, batches):
    root, journal = watched
    live_tree(root)
    hinted = journal.counts["hinted"]
    for batch in batches:
        for kind, n in batch:
            apply_edit(root, kind, n)
        result = service.save(root, "after edits")  # at once: the cookie makes it exact
        expected = git_tree(root, *(str(p.relative_to(root)) for p in root.rglob("*")
                                    if is_sensitive(str(p.relative_to(root)))))
        assert result.tree == expected, (batch, git(root, "diff-tree", "-r", expected,
                                                    result.tree, check=False))
        assert sorted(s.path for s in result.skipped) == sorted(
            str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
            and is_sensitive(str(p.relative_to(root)))), batch
    assert journal.counts["hinted"] - hinted == len(batches)  # none fell back to a full scan


def test_a_save_from_another_process_in_between_keeps_the_trees_exact(watched):
    from conftest import run_cli

    root, _journal = watched
    live_tree(root)  # trusted, and its cache kept in memory
    for i in range(150):  # enough that the other process writes its cache file
        (root / "pkg" / f"many{i}.txt").write_text(f"{i}\n")
    assert run_cli("-C", str(root), "save", "from another process").code == 0
    (root / "pkg" / "m4.py").write_text("after the other save\n")
    assert service.save(root, "here again").tree == git_tree(root)


def aged(root) -> None:
    """Every file old enough that only a stat change (not the racy window) says it moved."""
    for f in (root / "pkg").iterdir():
        os.utime(f, (time.time() - 3600, time.time() - 3600))


def test_a_mode_change_alone_is_seen_at_once(watched):
    root, journal = watched
    aged(root)
    live_tree(root)
    os.chmod(root / "pkg" / "m2.py", 0o755)  # an attribute event, nothing else
    hinted = journal.counts["hinted"]
    assert service.save(root, "chmod").tree == git_tree(root)
    assert journal.counts["hinted"] == hinted + 1
    assert "100755" in git(root, "ls-tree", "-r", git_tree(root), "pkg/m2.py")


def _unseen_edit(root, how: str, outside) -> None:
    """A change inotify does not report: a write through mmap, or through a hard link made
    from outside the workspace before the watcher started."""
    if how == "mmap":
        import mmap

        with open(root / "pkg" / "m3.py", "r+b") as f, mmap.mmap(f.fileno(), 0) as m:
            m[:1] = b"#"
            m.flush()
    else:
        with open(outside, "r+b") as f:
            f.write(b"#")


@pytest.fixture
def linked(watched, tmp_path):
    root, journal = watched
    outside = tmp_path / "outside-link"
    os.link(root / "pkg" / "m3.py", outside)
    aged(root)
    live_tree(root)
    return root, journal, outside


@pytest.mark.parametrize("how", ["mmap", "hard_link"])
def test_what_no_event_shows_is_in_a_tree_within_the_bound(linked, how):
    from gitckpt.store.git.hinted import RECHECK_SAVES

    root, journal, outside = linked
    _unseen_edit(root, how, outside)
    want = git_tree(root)
    for n in range(1, RECHECK_SAVES + 1):
        if service.save(root, f"save {n}").tree == want:
            break
    else:
        pytest.fail(f"not found in {RECHECK_SAVES} saves")
    assert journal.counts["full"] == 1  # found by the slices, not by a full scan


@pytest.mark.parametrize("how", ["mmap", "hard_link"])
def test_a_restore_plans_against_the_files_as_they_are(linked, how):
    """The restore sees the unseen change: it rewrites the file, and its safety copy holds
    the changed bytes, which its undo brings back."""
    root, _journal, outside = linked
    service.save(root, "before")  # the step the restore goes back to
    _unseen_edit(root, how, outside)
    changed = (root / "pkg" / "m3.py").read_bytes()
    assert changed.startswith(b"#")
    out = service.restore(root, "head", apply=True)
    assert out.plan.names("modify") == ["pkg/m3.py"]
    assert out.safety is not None
    assert (root / "pkg" / "m3.py").read_bytes() == b"x = 3\n"
    service.restore(root, out.safety[:12], apply=True)
    assert (root / "pkg" / "m3.py").read_bytes() == changed


@pytest.mark.parametrize("how", ["mmap", "hard_link"])
def test_a_save_elsewhere_is_never_undone_by_the_journal(linked, how):
    """Another process's save records the change; the next save here must not record the
    bytes from before it (the journal's cache yields to the newer scan)."""
    from conftest import run_cli

    root, _journal, outside = linked
    _unseen_edit(root, how, outside)
    want = git_tree(root)
    assert run_cli("-C", str(root), "save", "from another process").code == 0
    assert service.open_timeline(root).head(service.open_timeline(root).resolve(None)
                                            ).tree == want
    assert service.save(root, "here again").tree == want
