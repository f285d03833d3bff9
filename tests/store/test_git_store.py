"""GitStore snapshots agree with git itself, leave things out as DESIGN.md section 4 says,
and never touch the user's index."""

from __future__ import annotations

import json
import os
import subprocess
import zlib
from pathlib import Path

import pytest
from conftest import RepoGuard, git, git_tree, make_repo, service

from gitckpt.safety.scope import Scope
from gitckpt.store.discover import open_store


@pytest.fixture(autouse=True, params=["one thread", "two threads"])
def threads(request, monkeypatch):
    """Every snapshot test also runs with the scan cut in two (as for large workspaces)."""
    from gitckpt.store.git import split as git_split

    if request.param == "two threads":
        monkeypatch.setattr(git_split, "PARALLEL_MIN", 1)


def snap(root: Path, excludes=()):
    store = open_store(root)
    with store.lock():
        return store.snapshot(Scope.load(str(store.root), list(excludes)))


def rich_workspace(root: Path) -> None:
    (root / "empty.txt").write_bytes(b"")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    os.chmod(root / "run.sh", 0o755)
    os.symlink("src/app.py", root / "app-link")
    (root / os.fsdecode(b"na\xefve.txt")).write_bytes(b"not utf-8 name\n")
    (root / "deep" / "er" / "est").mkdir(parents=True)
    (root / "deep" / "er" / "est" / "x.py").write_text("x = 1\n")
    nested = root / "vendor" / "lib"
    nested.mkdir(parents=True)
    git(nested, "init", "-q")
    (nested / "lib.py").write_text("lib\n")
    git(nested, "add", "-A")
    git(nested, "commit", "-q", "-m", "lib")
    (root / ".env").write_text("SECRET=marker-env-5f2c\n")
    (root / "id_rsa").write_text("-----BEGIN marker-rsa-9d1e-----\n")


def test_tree_equals_git_add_all(repo, guard):
    rich_workspace(repo)
    guard.reset()
    assert snap(repo).tree == git_tree(repo, ".env", "id_rsa")
    guard.check()


def test_incremental_changes_match_git(repo, guard):
    rich_workspace(repo)
    snap(repo)
    (repo / "src" / "app.py").write_text("print('v3')\n")
    (repo / "empty.txt").unlink()
    os.chmod(repo / "run.sh", 0o644)
    (repo / "app-link").unlink()
    os.symlink("README.md", repo / "app-link")
    (repo / "deep" / "er" / "est" / "x.py").unlink()
    (repo / "deep" / "er" / "est").rmdir()
    (repo / "deep" / "er" / "est").write_text("file now\n")
    (repo / "new dir").mkdir()
    (repo / "new dir" / "n.txt").write_text("n\n")
    (repo / "vendor" / "lib" / "lib.py").write_text("lib 2\n")
    git(repo / "vendor" / "lib", "commit", "-q", "-am", "lib 2")  # the nested HEAD moves
    guard.reset()
    assert snap(repo).tree == git_tree(repo, ".env", "id_rsa")
    guard.check()


def test_no_change_snapshot_reads_nothing(repo):
    rich_workspace(repo)
    first = snap(repo)
    store = open_store(repo)
    opened = []
    with store.lock():
        again = store.snapshot(Scope.load(str(repo)), update_cache=True,
                                        progress=opened.append)
    assert again.tree == first.tree
    # Only the left-out files are listed again (never read); nothing in scope is revisited.
    assert sorted(opened) == [".env", "id_rsa"]


def test_sensitive_content_never_reaches_the_object_database(repo, guard):
    rich_workspace(repo)
    (repo / ".ssh").mkdir()
    (repo / ".ssh" / "config").write_text("Host marker-ssh-77aa\n")
    guard.reset()
    service.init(repo, "secrets", goal="keep secrets out")
    service.save(repo, "step")
    result = service.resume(repo)
    assert "marker" not in result.text
    objects = repo / ".git" / "objects"
    for path in objects.rglob("*"):
        if path.is_file() and len(path.parent.name) == 2:
            data = zlib.decompress(path.read_bytes())
            for marker in (b"marker-env-5f2c", b"marker-rsa-9d1e", b"marker-ssh-77aa"):
                assert marker not in data, path
    guard.check()


def test_left_out_files_are_listed_with_size_and_mtime(repo, monkeypatch):
    rich_workspace(repo)
    monkeypatch.setenv("GITCKPT_MAX_FILE_SIZE", "1K")
    (repo / "big.bin").write_bytes(b"x" * 5000)
    (repo / "data").mkdir()
    (repo / "data" / "huge.csv").write_text("a,b\n")
    (repo / ".ckptignore").write_text("data/\n")
    s = snap(repo, ["*.tmp"])
    (repo / "scratch.tmp").write_text("t\n")
    reasons = {k.path: (k.reason, k.size) for k in s.skipped}
    assert reasons == {".env": ("sensitive", 23), "id_rsa": ("sensitive", 32),
                       "big.bin": ("too_large", 5000)}
    assert s.tree == git_tree(repo, ".env", "id_rsa", "big.bin", "data", "scratch.tmp")


def test_rule_changes_drop_cached_files(repo):
    (repo / "keep.txt").write_text("keep\n")
    (repo / "later.out").write_text("later ignored\n")
    (repo / "sub").mkdir()
    (repo / "sub" / "gen.out").write_text("generated\n")
    snap(repo)
    # A new .gitignore, an exclude pattern and a size limit each drop files already cached.
    (repo / "sub" / ".gitignore").write_text("gen.out\n")
    assert snap(repo).tree == git_tree(repo)
    (repo / ".git" / "info" / "exclude").write_text("later.out\n")
    assert snap(repo).tree == git_tree(repo)
    assert snap(repo, ["keep.txt"]).tree == git_tree(repo, "keep.txt")
    assert snap(repo).tree == git_tree(repo)


def test_monorepo_subdirectory_workspace(repo, guard):
    pkg = repo / "packages" / "auth"
    (pkg / "src").mkdir(parents=True)
    (pkg / "src" / "token.py").write_text("def sign(): ...\n")
    (pkg / "README.md").write_text("auth\n")
    (repo / "packages" / "other.txt").write_text("outside\n")
    guard.reset()
    s = snap(pkg)
    assert s.tree == git_tree(pkg, prefix="packages/auth")
    result = service.init(pkg, "auth work")
    (pkg / "src" / "token.py").write_text("def sign(): return 1\n")
    (repo / "src" / "app.py").write_text("print('outside change')\n")
    saved = service.save(pkg, "sign returns 1")
    assert saved.changes.modified == ("src/token.py",)
    assert service.resume(pkg).unsaved.paths() == []
    # The root workspace of the same repository has its own (empty) task list pointer.
    assert service.tasks(repo).active is None
    assert result.save.task in [t.id for t in service.tasks(repo).tasks]
    guard.check(status_changes=True)


def test_user_index_is_never_opened_for_writing(repo):
    """The private index lives under .git/gitckpt and git's own index keeps bytes and mtime."""
    index = repo / ".git" / "index"
    before = (index.read_bytes(), index.stat().st_mtime_ns)
    for i in range(3):
        (repo / f"f{i}.txt").write_text(str(i))
        snap(repo)
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before
    private = list((repo / ".git" / "gitckpt").glob("ws-*/index"))
    assert len(private) == 1
    assert private[0].stat().st_size > 0


def test_racy_same_size_edit_with_restored_mtime_is_caught(repo):
    f = repo / "racy.txt"
    f.write_text("aaaa\n")
    first = snap(repo)
    st = f.stat()
    f.write_text("bbbb\n")
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert snap(repo).tree != first.tree
    assert snap(repo).tree == git_tree(repo)


def test_vanishing_and_unreadable_files_during_a_scan(repo):
    for i in range(5):
        (repo / f"v{i}.txt").write_text(f"{i}\n")
    store = open_store(repo)

    def vanish(rel):  # the scanner reports each path just before taking it
        if rel == "v2.txt":
            (repo / "v2.txt").unlink()
        if rel == "v3.txt":
            (repo / "v3.txt").unlink()
            (repo / "v3.txt").mkdir()  # replaced by a directory mid-scan
    with store.lock():
        s = store.snapshot(Scope(), update_cache=True, progress=vanish)
    assert s.tree == git_tree(repo)


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another user")
def test_unreadable_file_is_skipped_not_fatal(tmp_path):
    """Runs the save as `nobody` in a forked child, so a root-owned 0600 file is unreadable."""
    import pwd
    import shutil
    import tempfile

    nobody = pwd.getpwnam("nobody")
    base = Path(tempfile.mkdtemp(dir="/tmp"))
    try:
        repo = make_repo(base / "r")
        (repo / "locked.txt").write_text("root only\n")
        subprocess.run(["chown", "-R", f"{nobody.pw_uid}:{nobody.pw_gid}", str(base)], check=True)
        os.chown(repo / "locked.txt", 0, 0)
        os.chmod(repo / "locked.txt", 0o600)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: drop to nobody and save
            code = 1
            try:
                import pygit2
                pygit2.settings.search_path[pygit2.enums.ConfigLevel.GLOBAL] = str(base)
                os.environ["HOME"] = os.environ["XDG_STATE_HOME"] = str(base)
                os.setgid(nobody.pw_gid)
                os.setuid(nobody.pw_uid)
                result = service.init(repo, "t")
                os.write(write, repr([s.to_dict() for s in result.save.skipped]
                                     ).encode())
                code = 0
            except BaseException:
                import traceback
                os.write(write, traceback.format_exc().encode())
            finally:
                os._exit(code)
        os.close(write)
        _, status = os.waitpid(pid, 0)
        out = os.read(read, 65536).decode()
        assert os.waitstatus_to_exitcode(status) == 0, out
        assert "'path': 'locked.txt', 'reason': 'unreadable'" in out
    finally:
        shutil.rmtree(base)


def test_linked_worktrees_keep_their_own_active_task_and_index(repo):
    wt = repo.parent / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "feature")
    main_guard, wt_guard = RepoGuard(repo), RepoGuard(wt)
    a = service.init(repo, "main work").save.task
    b = service.init(wt, "worktree work").save.task
    assert service.tasks(repo).active == a
    assert service.tasks(wt).active == b
    (wt / "wt.txt").write_text("only in the worktree\n")
    saved = service.save(wt, "worktree step")
    assert saved.changes.added == ("wt.txt",)
    assert service.resume(repo).unsaved.paths() == []
    main_guard.check()
    wt_guard.check(status_changes=True)
    assert len(list((repo / ".git").glob("**/gitckpt/ws-root/index"))) == 2


def test_line_ending_filters_apply_as_git_add_applies_them(repo):
    (repo / "win.txt").write_bytes(b"one\r\ntwo\r\n")
    (repo / "raw.bin").write_bytes(b"one\r\ntwo\r\n")
    for f in ("win.txt", "raw.bin"):  # old enough to be trusted by the stat cache
        os.utime(repo / f, (1_700_000_000, 1_700_000_000))
    first = snap(repo)
    assert first.tree == git_tree(repo)  # no attributes: bytes as they are
    (repo / ".gitattributes").write_text("*.txt text eol=lf\n")
    assert snap(repo).tree == git_tree(repo)
    (repo / "win2.txt").write_bytes(b"three\r\n")
    assert snap(repo).tree == git_tree(repo)
    blob = git(repo, "ls-tree", snap(repo).tree, "win2.txt").split()[2]
    assert git(repo, "cat-file", "blob", blob) == "three\n"


def test_too_new_files_are_rechecked_then_trusted(repo, monkeypatch):
    from gitckpt.store.git import scan as git_scan

    (repo / "fresh.txt").write_text("fresh\n")
    monkeypatch.setattr(git_scan, "RACY_NS", 10**18)  # everything counts as just modified
    first = snap(repo)
    state = json.loads(next((repo / ".git" / "gitckpt").glob("ws-*/scan.json")).read_text())
    assert "fresh.txt" in state["racy"]
    monkeypatch.setattr(git_scan, "RACY_NS", 0)  # time has passed
    monkeypatch.setattr(git_scan, "PENDING_MAX", 0)  # and the index gets written
    seen = []
    store = open_store(repo)
    with store.lock():
        again = store.snapshot(Scope(), update_cache=True, progress=seen.append)
    assert again.tree == first.tree
    state = json.loads(next((repo / ".git" / "gitckpt").glob("ws-*/scan.json")).read_text())
    assert state["racy"] == []
    with store.lock():
        seen.clear()
        store.snapshot(Scope(), update_cache=True, progress=seen.append)
    assert seen == []  # trusted now: nothing is looked at again


@pytest.mark.parametrize("pending", [False, True])
def test_a_scan_outside_a_watcher_writes_what_it_took(repo, monkeypatch, pending):
    """A hook's or the CLI's own process keeps nothing in memory: what its scan took is in the
    written cache, so the next process reads nothing again (pending: only in a large index)."""
    from gitckpt.store.git import scan as git_scan

    monkeypatch.setattr(git_scan, "RACY_NS", 0)  # no file counts as just modified
    if pending:
        monkeypatch.setattr(git_scan, "PENDING_INDEX_MIN", 0)
    snap(repo)
    (repo / "new.txt").write_text("new\n")
    store = open_store(repo)
    for _ in range(2):
        seen: list[str] = []
        with store.lock():
            assert store.snapshot(Scope(), progress=seen.append).tree == git_tree(repo)
    assert seen == (["new.txt"] if pending else [])


def test_the_folders_kept_with_the_cache_are_those_of_its_entries(repo, monkeypatch):
    """The side state's folder list (where a new nested repository is looked for) grows with
    the entries a scan adds, and is made again from the index when one leaves."""
    from gitckpt.store.git import scan as git_scan

    monkeypatch.setattr(git_scan, "RACY_NS", 0)
    store = open_store(repo)
    for change in ("add", "add more", "remove"):
        if change == "add":
            (repo / "a" / "b").mkdir(parents=True)
            (repo / "a" / "b" / "c.txt").write_text("c\n")
        elif change == "add more":
            (repo / "x" / "y").mkdir(parents=True)
            (repo / "x" / "y" / "z.txt").write_text("z\n")
        else:
            (repo / "a" / "b" / "c.txt").unlink()
        with store.lock():
            tree = store.snapshot(Scope()).tree
        files = git(repo, "ls-tree", "-r", "--name-only", tree).split()
        folders = sorted({f.rsplit("/", i)[0] for f in files
                          for i in range(1, f.count("/") + 1)})
        state = json.loads(next((repo / ".git" / "gitckpt").glob("ws-*/scan.json")).read_text())
        assert state["dirs"] == folders, change


def test_a_cut_counts_index_entries_by_their_bytes(tmp_path):
    """The binary search of the two-thread cut reads each entry's stored path: every key,
    names that are not UTF-8 among them, lands where a search of the sorted bytes would."""
    import bisect

    import pygit2

    from gitckpt.store.git.split import _weight, lower_bound

    root = tmp_path / "w"
    names = [b"a-b", b"a.c", b"a/x", b"a/y/z", b"a0", b"caf\xe9.txt", b"caf\xe9/deep", b"z\xff"]
    for name in names:
        path = root / os.fsdecode(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x")
    git(root, "init", "-q")
    git(root, "add", "-A")
    index = pygit2.Repository(str(root)).index
    stored = sorted(os.fsencode(e.path) for e in index)
    for key in [b"", b"a", b"a/", b"a\0", b"a0", b"b", b"caf\xe9", b"caf\xe9/", b"z", b"\xff"]:
        assert lower_bound(index, key) == bisect.bisect_left(stored, key), key
    assert _weight(index, b"a") == 2  # a/x, a/y/z; not a-b, a.c or a0
    assert _weight(index, b"caf\xe9") == 1


WRITER = """
import sys, pygit2
repo = pygit2.Repository(sys.argv[1])
oid = repo.head.target
n = 0
while True:
    n += 1
    name = f"refs/checkpoints/w/drifts/{n}"
    repo.references.create(name, oid)
    if n > 50:
        repo.references.delete(f"refs/checkpoints/w/drifts/{n - 50}")
"""


@pytest.mark.slow
def test_listing_refs_beside_a_writer_never_cries_damaged(repo):
    """Another process creates and deletes refs all along: a thousand listings see no damage
    (a ref made between libgit2's listing and the walk of the loose folders was called
    damaged, with the advice to run git fsck), and each listed ref names a real object."""
    import sys

    store = open_store(repo)
    import time

    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(repo)])
    try:
        while not store.list_refs("refs/checkpoints/"):  # the writer has begun
            assert writer.poll() is None, "the writer ended"
            time.sleep(0.01)
        seen = 0
        for _ in range(1000):
            damaged: list[str] = []
            listed = store.list_refs("refs/checkpoints/", damaged)
            assert damaged == [], damaged
            seen = max(seen, len(listed))
            for oid in listed.values():
                assert len(oid) == 40
        assert seen > 1  # the writer was writing meanwhile
    finally:
        writer.kill()
        writer.wait()
    git(repo, "fsck")
