"""Regressions of the watcher fast path's adversarial review: each test is one finding, fixed
in the same round. The truth asserted throughout: a snapshot's tree is the files on disk (git's
own tree of them), nothing fails with a traceback, and the user's git is left alone."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import RepoGuard, git, git_tree, make_plain, make_repo, run_cli, service
from test_journal import start_watch

import gitckpt
from gitckpt.store import files
from gitckpt.store import journal as journals

pytestmark = [pytest.mark.slow, pytest.mark.settling]

CODE = str(Path(gitckpt.__file__).resolve().parent.parent)  # the gitckpt under test
CHILD_ENV = {"PYTHONPATH": CODE}  # child processes import the same gitckpt, whatever their cwd


def aged(root: Path) -> None:
    """Every file old enough that only a stat change (not the racy window) says it moved."""
    old = time.time() - 3600
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in (".git", ".gitckpt")]
        for n in names:
            if not os.path.islink(os.path.join(folder, n)):
                os.utime(os.path.join(folder, n), (old, old))


@pytest.fixture
def watched(tmp_path, monkeypatch):
    """A repository with a watcher in this process; the user's git checked afterwards."""
    monkeypatch.setattr(journals, "COOKIE_WAIT", 10.0)  # a loaded machine: still hinted
    root = make_repo(tmp_path / "repo")
    guard = RepoGuard(root)
    (root / "pkg").mkdir()
    for i in range(6):
        (root / "pkg" / f"m{i}.py").write_text(f"x = {i}\n")
    aged(root)
    service.init(root, "watched")
    session, journal = start_watch(root)
    yield root, journal
    session.watcher.source.stop()
    guard.check(status_changes=True)


def live_tree(root: Path, task: str | None = None) -> str:
    tl = service.open_timeline(root)
    return tl.live(tl.meta(tl.resolve(task))).tree


def diff(root: Path, a: str, b: str) -> str:
    return git(root, "diff-tree", "-r", a, b, check=False)


# -- 1. a save elsewhere is never undone (s31) --------------------------------------------------

def test_a_save_elsewhere_is_not_undone_by_a_cache_an_unsaved_look_left(watched, tmp_path):
    """After another process records bytes no event showed, the next save here records them
    too, even when a read-only look here had seen other bytes in between (and the other
    process found the tree the last save here had found)."""
    root, journal = watched
    f = root / "pkg" / "m3.py"
    outside = tmp_path / "outside-link"
    os.link(f, outside)  # a link from outside: writes through it raise no event here
    first = service.save(root, "first")  # the full scan that makes the journal trusted
    assert first.tree == git_tree(root)
    old = f.stat()
    f.write_text("x = 9\n")  # seen by the watcher
    os.utime(f, ns=(old.st_atime_ns, old.st_mtime_ns))  # not racy: only a stat says it moves
    assert live_tree(root) == git_tree(root) != first.tree  # a look that writes no cache
    with open(outside, "r+b") as w:  # back to the saved bytes, where no event shows it
        w.write(b"x = 3\n")
    os.utime(outside, ns=(old.st_atime_ns, old.st_mtime_ns))
    want = git_tree(root)
    assert want == first.tree
    out = run_cli("-C", str(root), "save", "from another process", env=CHILD_ENV)
    assert out.code == 0, out.err
    assert "Traceback" not in out.err, out.err
    tl = service.open_timeline(root)
    assert tl.head(tl.resolve(None)).tree == want  # what the other process recorded
    here = service.save(root, "here again")
    assert here.tree == want, diff(root, want, here.tree)
    assert journal.counts["full"] == 1  # a narrowed scan, that yielded to the other's


# -- 2. the rules a memo was made under (s23) ---------------------------------------------------

def test_a_cache_taken_under_other_excludes_is_not_reused(watched):
    """A look under one task's excludes leaves no cache that another task's snapshot (other
    rules) takes as its own: each tree follows its task's rules."""
    root, _journal = watched
    wide = str(service.active(root))
    service.init(root, "narrow", exclude=["pkg/"])
    narrow = str(service.active(root))
    assert service.save(root, "wide", task=wide).tree == git_tree(root)  # its rules cached
    assert live_tree(root, narrow) == git_tree(root, "pkg")  # under the narrow rules
    (root / "notes.txt").write_text("seen by the watcher\n")
    again = service.save(root, "wide again", task=wide)
    assert again.tree == git_tree(root), diff(root, git_tree(root), again.tree)
    assert live_tree(root, narrow) == git_tree(root, "pkg")
    assert service.save(root, "narrow", task=narrow).tree == git_tree(root, "pkg")


# -- 3. a same-size rewrite in place, its mtime put back (s11/s12) ------------------------------

TOKEN = re.compile(rb"(?:(v\d{5}\|)\1*)")  # one version of the rewritten file, whole

WRITER = textwrap.dedent("""
    import json, os, sys, time
    path, stop, halves = sys.argv[1], sys.argv[2], 200
    st = os.stat(path)
    n = 0
    deadline = time.monotonic() + 20
    stalled = []  # versions whose two halves lay further apart than the reader waits
    while not os.path.exists(stop) and time.monotonic() < deadline:
        n += 1
        token = b"v%05d|" % n
        with open(path, "r+b") as f:  # in place, the same size, in two writes
            began = time.monotonic_ns()
            f.write(token * halves)
            f.flush()
            os.fsync(f.fileno())
            time.sleep(0.03)  # a reader between the halves sees a torn mix
            f.write(token * halves)
            f.flush()
            if time.monotonic_ns() - began > int(sys.argv[3]):
                stalled.append(n)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # the mtime put back
        time.sleep(0.01)
    print(json.dumps({"versions": n, "stalled": stalled}))
""")
# A version written more slowly than this is one a reader may take whole while half written:
# `read_regular` promises no more (a write stalled for longer than SETTLED_NS), and a loaded
# machine can stall a writer that long. The margin covers the kernel's coarse clock that
# stamps the file's times (a tick or two behind the one the reader compares them with).
STALL_NS = files.SETTLED_NS - 15_000_000


def saves_while_rewritten(root: Path, f: Path, stop: Path, saves: int = 15) -> list:
    """Saves taken while another process rewrites `f` in place (see WRITER); each holds one
    whole version of it or leaves it out as `changing`."""
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(f), str(stop), str(STALL_NS)],
                              stdout=subprocess.PIPE, text=True)
    try:
        results = []
        for k in range(saves):
            results.append(service.save(root, f"during {k}"))
            time.sleep(0.013)
    finally:
        stop.touch()
        out, _ = writer.communicate(timeout=30)
        assert writer.returncode == 0
    stalled = set(json.loads(out)["stalled"])
    rel = f.relative_to(root).as_posix()
    for r in results:
        body = plain_bytes(root, r.tree, rel)
        left_out = {s["path"]: s["reason"] for s in r.to_dict()["skipped"]}
        if body is None:
            assert left_out.get(rel) == "changing", left_out
        elif not TOKEN.fullmatch(body):
            newest = max(int(v) for v in re.findall(rb"v(\d{5})\|", body))
            assert newest in stalled, f"a torn mix was stored: {body[:20]!r}...{body[-20:]!r}"
    return results


def plain_bytes(root: Path, tree: str, name: str) -> bytes | None:
    store = service.open_timeline(root).store
    head, _, rest = name.partition("/")
    for e in store.read_tree(tree):
        if e.name.decode() == head:
            return plain_bytes(root, str(e.id), rest) if rest else store.read_blob(e.id)
    return None


@pytest.mark.parametrize("kind", ["git", "dir"])
def test_a_same_size_rewrite_with_its_mtime_put_back_is_never_torn_nor_missed(
        kind, tmp_path, hermetic, monkeypatch):
    """Another process rewrites a file in place (same size, mtime put back): each save stores
    one whole version or leaves it out as changing; once it stops, a save holds its last bytes
    (within the re-check bound under a watcher) and a restore plans to undo them."""
    from gitckpt.store.git import hinted

    monkeypatch.setattr(journals, "COOKIE_WAIT", 10.0)
    root = make_repo(tmp_path / "repo") if kind == "git" else make_plain(hermetic / "plain")
    guard = RepoGuard(root) if kind == "git" else None
    f = root / "churn.txt"
    f.write_bytes(b"v00000|" * 400)
    aged(root)
    service.init(root, "rewrite")
    session = start_watch(root)[0] if kind == "git" else None
    stop = tmp_path / "stop"
    try:
        before = service.save(root, "before")  # step 1: the file as it was
        saves_while_rewritten(root, f, stop)
        final = f.read_bytes()
        bound = hinted.RECHECK_SAVES if kind == "git" else 1
        for n in range(bound):
            if plain_bytes(root, service.save(root, f"after {n}").tree, "churn.txt") == final:
                break
        else:
            pytest.fail(f"the last bytes are not in a tree after {bound} saves")
        plan = service.restore(root, "1").plan  # back to the step before the writer
        assert plan.names("modify") == ["churn.txt"], plan
        assert before.tree != service.save(root, "last").tree
    finally:
        if session is not None:
            session.watcher.source.stop()
    if guard is not None:
        guard.check(status_changes=True)


# -- 4. content filters (s30) -------------------------------------------------------------------

def git_blob(root: Path, path: str) -> str:
    """The blob id `git add` stores for work-tree file `path` (its clean filters applied)."""
    return git(root, "hash-object", f"--path={path}", path).strip()


def test_blobs_are_cleaned_as_git_add_cleans_them_save_after_save(watched, tmp_path):
    """With line-ending and ident attributes, every saved blob is the one `git add` would
    store, at the first save and after each edit; a filtered file rewritten by another
    process is stored whole (one read, then cleaned), never a torn mix."""
    root, _journal = watched
    (root / ".gitattributes").write_text("*.txt text eol=lf ident\n")
    (root / "docs").mkdir()
    for i in range(4):
        (root / "docs" / f"d{i}.txt").write_bytes(f"$Id$\r\nline {i}\r\n".encode())
    service.save(root, "attributes")
    for round_ in range(4):
        target = root / "docs" / f"d{round_ % 4}.txt"
        target.write_bytes(f"$Id: stale $\r\nround {round_}\r\nmore\r\n".encode())
        result = service.save(root, f"round {round_}")
        assert result.tree == git_tree(root), diff(root, git_tree(root), result.tree)
        store = service.open_timeline(root).store
        entries = {e.name.decode(): str(e.id) for e in store.read_tree(
            next(e.id for e in store.read_tree(result.tree) if e.name == b"docs"))}
        for i in range(4):
            assert entries[f"d{i}.txt"] == git_blob(root, f"docs/d{i}.txt"), (round_, i)
    churned = root / "docs" / "churn.txt"  # filtered too: one read, then cleaned
    churned.write_bytes(b"v00000|" * 400)
    service.save(root, "churn made")
    saves_while_rewritten(root, churned, tmp_path / "stop")
    last = service.save(root, "settled")
    assert last.tree == git_tree(root), diff(root, git_tree(root), last.tree)


# -- 5. a folder replaced by a link (s15/s16) ---------------------------------------------------

@pytest.mark.parametrize("where", ["outside", "inside"])
def test_a_folder_swapped_for_a_link_is_a_link_and_back_again(watched, tmp_path, where):
    """A folder replaced by a symlink to a folder holding the same names is a 120000 entry,
    not the files behind it, also when files behind the link change; made a folder again,
    its files are back."""
    root, journal = watched
    names = [f"m{i}.py" for i in range(6)] + ["sub/deep.py", "sub/er/deeper.py"]
    for name in names[6:]:
        (root / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "pkg" / name).write_text("x = 'in the folder'\n")
    service.save(root, "trusted")
    behind = tmp_path / "behind" if where == "outside" else root / "behind"
    for name in [*names, "extra.py"]:
        (behind / name).parent.mkdir(parents=True, exist_ok=True)
        (behind / name).write_text(f"x = 'behind {name}'\n")
    service.save(root, "behind made")
    shutil.rmtree(root / "pkg")
    os.symlink(behind, root / "pkg")
    for name in names:  # written through the link, as a tool that follows it would
        (root / "pkg" / name).write_text(f"x = 'through the link {name}'\n")
    result = service.save(root, "a link now")
    assert result.tree == git_tree(root), diff(root, git_tree(root), result.tree)
    assert git(root, "ls-tree", result.tree, "pkg").startswith("120000 ")
    (behind / "sub" / "deep.py").write_text("x = 'changed behind'\n")
    (root / "pkg" / "m1.py").write_text("x = 'again through the link'\n")
    result = service.save(root, "behind changed")
    assert result.tree == git_tree(root), diff(root, git_tree(root), result.tree)
    (root / "pkg").unlink()
    for name in names:
        (root / "pkg" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "pkg" / name).write_text(f"x = '{name} again'\n")
    back = service.save(root, "a folder again")
    assert back.tree == git_tree(root), diff(root, git_tree(root), back.tree)
    assert journal.counts["full"] == 1  # each of them a narrowed scan


# -- 6. too deep (s02/s04) ----------------------------------------------------------------------

def test_a_folder_too_deep_made_under_a_watcher_is_left_out_with_a_reason(watched):
    """A folder more than 100 levels deep, made while a watcher runs, and a .gitignore change
    after it: each save succeeds, leaves the too-deep folder out as `too_deep`, and holds
    every other file."""
    root, _journal = watched
    service.save(root, "trusted")
    d = root
    for _ in range(101):
        d = d / "d"
    d.mkdir(parents=True)
    (d / "deep.txt").write_text("too deep\n")
    (root / "pkg" / "m1.py").write_text("x = 'beside the deep one'\n")
    for title in ("deep made", "rules changed", "another edit"):
        if title == "rules changed":
            (root / ".gitignore").write_text("*.log\nbuild/\n*.tmp\n")
        if title == "another edit":
            (d / "deep.txt").write_text("still too deep\n")
            (root / "pkg" / "m2.py").write_text("x = 'another'\n")
        result = service.save(root, title)
        skipped = result.to_dict()["skipped"]
        assert [s["reason"] for s in skipped] == ["too_deep"], (title, skipped)
        folder = skipped[0]["path"]
        assert str(d.relative_to(root)).startswith(folder + "/"), folder
        assert result.tree == git_tree(root, folder), title
    out = run_cli("-C", str(root), "save", "from the CLI", env=CHILD_ENV)
    assert out.code == 0, out.err
    assert "Traceback" not in out.err, out.err


# -- 7 and 8. unreadable and unwatched folders (s13/s14/s32, s25/s26) ---------------------------

LOCKED_CHILD = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from gitckpt.engine.watch import Settings
    sys.path.insert(0, os.environ["GITCKPT_TESTS"])  # the tests' own helpers
    from conftest import service
    from gitckpt.store import journal as journals

    journals.COOKIE_WAIT = 10.0
    root, when = Path(sys.argv[1]), sys.argv[2]
    out = {}
    service.init(root, "locked")  # snapshot 0: the files it could read are in the cache
    if when == "after_init":  # saved while readable
        os.chmod(root / "locked", 0)
        os.chmod(root / "pkg" / "closed.txt", 0)
    try:
        (root / "pkg" / "closed.txt").read_bytes()
        out["dropped"] = False
    except PermissionError:
        out["dropped"] = True
    session = service.watch(root, settings=Settings(quiet=3600.0, max_wait=3600.0,
                                                    poll=3600.0))
    out["mode"] = session.watcher.mode
    journal = journals.for_root(str(root))
    try:
        first = service.save(root, "first")  # a full scan: it finds what no watch covers
        out["first"] = first.to_dict()["skipped"]
        out["first_tree"] = first.tree
        out["unwatched"] = sorted(getattr(journal, "unwatched", ()))
        (root / "pkg" / "m1.py").write_text("x = 'seen'\\n")
        second = service.save(root, "second")
        out["second"] = second.to_dict()["skipped"]
        out["second_tree"] = second.tree
        os.chmod(root / "locked", 0o755)  # readable again; no watch was ever added to it
        (root / "locked" / "later.txt").write_text("made once readable\\n")
        with open(root / "locked" / "kept.txt", "a") as f:
            f.write("more\\n")
        third = service.save(root, "third")
        out["third"] = third.to_dict()["skipped"]
        out["third_tree"] = third.tree
        out["counts"] = journal.counts
    finally:
        session.watcher.source.stop()
    print(json.dumps(out))
""")


def locked_run(tmp_path: Path) -> tuple[Path, dict]:
    """The child's run (root's read override dropped) on a repository whose folder `locked`
    and file `pkg/closed.txt` were saved readable, then made unreadable (see LOCKED_CHILD)."""
    capsh = shutil.which("capsh") or "/usr/sbin/capsh"
    if not os.path.exists(capsh):
        pytest.skip("capsh is not installed: cannot drop root's read override")
    root = make_repo(tmp_path / "repo")
    guard = RepoGuard(root)
    (root / "pkg").mkdir()
    for i in range(6):
        (root / "pkg" / f"m{i}.py").write_text(f"x = {i}\n")
    (root / "locked").mkdir()
    (root / "locked" / "kept.txt").write_text("kept\n")
    (root / "pkg" / "closed.txt").write_text("closed\n")
    aged(root)
    script = tmp_path / "locked_child.py"
    script.write_text(LOCKED_CHILD)
    try:
        p = subprocess.run([capsh, "--drop=cap_dac_override,cap_dac_read_search", "--",
                            "-c", f'exec "{sys.executable}" "{script}" "{root}" after_init'],
                           capture_output=True, text=True, timeout=120, cwd=CODE,
                           env={**os.environ, **CHILD_ENV,
                                "GITCKPT_TESTS": str(Path(__file__).parents[1])})
    finally:
        os.chmod(root / "pkg" / "closed.txt", 0o644)
        os.chmod(root / "locked", 0o755)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode == 0, p.stdout + p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    if not out["dropped"]:
        pytest.skip("dropping the capabilities did not make the file unreadable")
    if out["mode"] != "events":
        pytest.skip("no file events in the child")
    guard.check(status_changes=True)
    return root, out


def test_unreadable_paths_are_skipped_and_a_folder_readable_again_is_visited(tmp_path):
    """Without root's read override: saves succeed (no traceback) with an unreadable file left
    out as `unreadable`; the unreadable folder is one no watch covers, visited by every
    snapshot, so files written in it once it is readable again are in the next save."""
    root, out = locked_run(tmp_path)
    for key in ("first", "second", "third"):
        assert ("pkg/closed.txt", "unreadable") in [(s["path"], s["reason"])
                                                   for s in out[key]], (key, out[key])
    assert out["unwatched"] == ["locked"], out
    want = git_tree(root, "pkg/closed.txt")
    assert out["third_tree"] == want, diff(root, want, out["third_tree"])
    assert out["counts"] == {"hinted": 2, "full": 1}, out["counts"]


def test_the_files_of_a_folder_made_unreadable_are_reported_by_every_save(tmp_path):
    """Each save that leaves out the files of a folder it cannot enter says so (`unreadable`),
    as the full scan of a folder alone does. Beside an unreadable file the full scan's retry
    took the folder's cached files out of the cache unsaid, and a hinted snapshot's visit of
    the folder found nothing to say: both left it out of the tree unreported."""
    _root, out = locked_run(tmp_path)
    for key in ("first", "second"):
        reasons = {s["path"]: s["reason"] for s in out[key]}
        assert reasons.get("locked/kept.txt", reasons.get("locked")) == "unreadable", \
            (key, out[key])


def test_a_folder_no_watch_covers_is_visited_by_every_snapshot(watched, monkeypatch):
    """A folder the journal lists as unwatched: a change in it that no event reports is in
    the next (hinted) snapshot, save after save."""
    root, journal = watched
    (root / "sub").mkdir()
    (root / "sub" / "f.txt").write_text("0\n")
    service.save(root, "trusted")
    saw = journal.saw
    monkeypatch.setattr(journal, "saw", lambda paths: saw(
        [p for p in paths if "/sub" not in p.removeprefix(str(root))]))  # no events from sub/
    monkeypatch.setattr(journal, "probe", lambda: {"sub"}, raising=False)
    journal.unwatched = {"sub"}
    hinted = journal.counts["hinted"]
    for n in range(1, 11):
        (root / "sub" / "f.txt").write_text(f"{n}\n" * n)
        (root / "sub" / f"new{n}.txt").write_text("new\n")
        result = service.save(root, f"save {n}")
        assert result.tree == git_tree(root), (n, diff(root, git_tree(root), result.tree))
    assert journal.counts["hinted"] == hinted + 10  # none fell back to a full scan


# -- 9. the re-check slices (s27) ---------------------------------------------------------------

def test_every_file_the_full_scan_saw_is_rechecked_within_the_bound(watched, monkeypatch):
    """Any RECHECK_SAVES narrowed saves in a row re-check every file the last full scan saw,
    files being added between them; each compares a range of the cached entries with
    their files (counted): a round compares each entry once, whatever the tree's shape."""
    from gitckpt.store.git import hinted

    root, _journal = watched
    for i in range(40):
        (root / "pkg" / f"n{i:02d}.py").write_text(f"n = {i}\n")
    aged(root)
    checked: list[tuple[bytes, bytes | None]] = []  # the ranges re-checked: [from, to)
    stats: list[int] = []  # the entries each re-check compared with their files
    sizes: list[int] = []  # the cached entries then
    recheck, compare = hinted.recheck, hinted.stat_moved

    def counted(index, position, workdir):
        stats[-1] += 1
        return compare(index, position, workdir)

    def spy(scanner, p, memo, progress):
        stats.append(0)
        rotation = recheck(scanner, p, memo, progress)
        sizes.append(len(p.index))
        if rotation.slices:
            k = rotation.cursor - 1
            checked.append((rotation.slices[k], rotation.slices[k + 1]
                            if k + 1 < len(rotation.slices) else None))
        return rotation

    monkeypatch.setattr(hinted, "recheck", spy)
    monkeypatch.setattr(hinted, "stat_moved", counted)
    seen_by_full = set(git(root, "ls-tree", "-r", "--name-only",
                           service.save(root, "full").tree).split())
    for n in range(3):  # into the round
        service.save(root, f"into {n}")
    del checked[:]
    for n in range(hinted.RECHECK_SAVES):
        for k in range(8):  # new names before the old ones
            (root / "pkg" / f"a{n}{k}.py").write_text(f"a = {n}{k}\n")
        service.save(root, f"window {n}")
    assert len(checked) == hinted.RECHECK_SAVES
    # a window of RECHECK_SAVES re-checks spans at most two rounds: each entry compared
    # at most twice, never a whole tree per save
    assert sum(stats[-hinted.RECHECK_SAVES:]) <= 2 * sizes[-1], (stats, sizes)
    missed = sorted(f for f in seen_by_full
                    if not any(lo <= os.fsencode(f) and (hi is None or os.fsencode(f) < hi)
                               for lo, hi in checked))
    assert not missed, missed


# -- 10. a restore racing an edit (s07) ---------------------------------------------------------

def test_a_file_edited_after_the_safety_copy_is_left_as_it_is(watched, monkeypatch):
    """An edit made after the restore took its safety copy and before it writes the file is
    not overwritten: the result reports the path blocked, and the edited bytes survive."""
    from gitckpt.engine import restore as restoring

    root, _journal = watched
    f = root / "pkg" / "m2.py"
    service.save(root, "step 1")
    f.write_text("x = 'step 2'\n")
    (root / "pkg" / "m4.py").write_text("x = 'step 2 too'\n")
    service.save(root, "step 2")
    mark = restoring.mark

    def edit_after_the_safety_copy(*args, **kw):
        mark(*args, **kw)
        f.write_text("x = 'typed while the restore ran'\n")

    monkeypatch.setattr(restoring, "mark", edit_after_the_safety_copy)
    out = service.restore(root, "1", apply=True, confirm=True)
    assert f.read_text() == "x = 'typed while the restore ran'\n"
    assert [p for p, _ in out.blocked] == ["pkg/m2.py"], out.blocked
    assert (root / "pkg" / "m4.py").read_text() == "x = 4\n"  # the rest is restored
    assert service.save(root, "after").tree == git_tree(root)


# -- 11. a user's file named like a cookie (s33) ------------------------------------------------

def test_a_file_named_like_a_cookie_is_saved_like_any_other(watched):
    """A workspace file whose name starts with the journal's cookie prefix is saved, and its
    edits are seen, as any file's."""
    root, journal = watched
    service.save(root, "trusted")
    f = root / "pkg" / f"{journals.COOKIE}mine.txt"
    f.write_text("a user's file\n")
    first = service.save(root, "made")
    assert first.tree == git_tree(root), diff(root, git_tree(root), first.tree)
    f.write_text("edited\n")
    second = service.save(root, "edited")
    assert second.tree == git_tree(root), diff(root, git_tree(root), second.tree)
    assert journal.counts["full"] == 1  # seen by the hinted snapshots
