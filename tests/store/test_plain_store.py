"""DirStore: plain folders get the same model, in a store stock git can read."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from conftest import git, git_tree, make_plain, run_cli, service

from gitckpt.core.errors import SchemaTooNew
from gitckpt.safety.scope import Scope
from gitckpt.store.discover import open_store
from gitckpt.store.plain import scan as snapshot


def tree_of(root: Path, excludes=()) -> str:
    store = open_store(root)
    store.prepare()
    with store.lock():
        return store.snapshot(Scope.load(str(store.root), list(excludes))).tree


def files_state(root: Path) -> dict[str, bytes]:
    """Every file under `root` except the store, with its bytes (or link target)."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith(".gitckpt"):
            continue
        out[rel] = os.readlink(p).encode() if p.is_symlink() else (
            p.read_bytes() if p.is_file() else b"<dir>")
    return out


def test_cli_session_in_a_plain_folder(tmp_path):
    root = make_plain(tmp_path / "docs")
    r = run_cli("-C", str(root), "init", "Write the guide", "--goal", "a usable guide")
    assert r.code == 0, r.err
    task = r.out.split("Started task ")[1].split()[0]
    (root / "guide.md").write_text("# Guide\n")
    r = run_cli("-C", str(root), "save", "Outline", "--conclusion", "five chapters",
                "--next", "write chapter 1")
    assert r.code == 0, r.err
    assert "1 added" in r.out, r.err
    (root / "guide.md").write_text("# Guide\n\nChapter 1\n")
    r = run_cli("-C", str(root), "resume")
    assert r.code == 0
    assert "M guide.md" in r.out
    assert "Next: write chapter 1" in r.out
    assert run_cli("-C", str(root), "log").out.count("Outline") == 1
    store = root / ".gitckpt"
    log = git(root, f"--git-dir={store}", "log", "--notes=checkpoints",
              f"refs/checkpoints/{task}/head")
    assert "step 1: Outline" in log
    assert '"conclusion": "five chapters"' in log
    p = subprocess.run(["git", f"--git-dir={store}", "fsck", "--strict"], capture_output=True,
                       text=True)
    assert p.returncode == 0
    assert "error" not in p.stderr.lower()
    assert not (root / ".git").exists()


def test_store_layout_is_private_and_hidden_from_a_later_git_init(tmp_path):
    root = make_plain(tmp_path / "w")
    service.init(root, "t")
    store = root / ".gitckpt"
    assert (store / ".gitignore").read_text() == "*\n"
    for p in [store, *store.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o077 == 0, (p, oct(mode))
    git(root, "init", "-q")
    status = git(root, "status", "--porcelain", "--untracked-files=all")
    assert ".gitckpt" not in status


def test_store_elsewhere_leaves_only_a_pointer(tmp_path, monkeypatch):
    root = make_plain(tmp_path / "w")
    outside = tmp_path / "stores" / "w-store"
    r = service.init(root, "t", store=str(outside))
    assert r.store == "dir"
    pointer = root / ".gitckpt"
    assert pointer.is_file()
    assert pointer.read_text() == f"gitckpt-store: {outside}\n"
    assert (outside / "gitckpt" / "format").exists()
    # Later commands find the store through the pointer, without the option.
    (root / "n.txt").write_text("n\n")
    assert service.save(root, "s").changes.added == ("n.txt",)
    # The same through GITCKPT_STORE for another folder.
    other = make_plain(tmp_path / "w2")
    monkeypatch.setenv("GITCKPT_STORE", str(outside))
    task2 = service.init(other, "t2").save.task
    monkeypatch.delenv("GITCKPT_STORE")
    # One store, two workspaces: separate active tasks and caches.
    assert service.tasks(other).active == task2
    assert service.tasks(root).active == r.save.task
    assert len(list((outside / "gitckpt").glob("ws-*/cache"))) == 2


def test_store_inside_the_workspace_is_never_snapshotted(tmp_path):
    root = make_plain(tmp_path / "w")
    inside = root / "keep" / "ckpt-store"
    service.init(root, "t", store=str(inside))
    service.save(root, "s")
    head = open_store(root).get_ref(f"refs/checkpoints/{service.tasks(root).active}/head")
    files = git(root, f"--git-dir={inside}", "ls-tree", "-r", "--name-only", head).split()
    assert not any(f.startswith(("keep/ckpt-store", ".gitckpt")) for f in files), files


def test_store_equal_to_the_workspace_is_refused(tmp_path):
    root = make_plain(tmp_path / "w")
    r = run_cli("-C", str(root), "init", "t", "--store", str(root))
    assert r.code == 1
    assert "cannot be the workspace itself" in r.err
    assert "hint:" in r.err


def test_same_files_same_tree_as_git(tmp_path):
    def build(root: Path) -> None:
        (root / "d" / "e").mkdir(parents=True)
        (root / "d" / "e" / "f.txt").write_text("deep\n")
        (root / "empty").write_bytes(b"")
        (root / "run.sh").write_text("#!/bin/sh\n")
        os.chmod(root / "run.sh", 0o755)
        os.symlink("d/e/f.txt", root / "link")
        (root / os.fsdecode(b"na\xefve.txt")).write_bytes(b"latin-1\n")
        (root / ".gitignore").write_text("*.tmp\n!keep.tmp\nout/\n")
        (root / "x.tmp").write_text("ignored\n")
        (root / "keep.tmp").write_text("kept by negation\n")
        (root / "d" / "out").mkdir()
        (root / "d" / "out" / "o.txt").write_text("ignored dir\n")
        (root / "d" / ".gitignore").write_text("*.log\n")
        (root / "d" / "a.log").write_text("ignored by the nested file\n")
        (root / "a.log").write_text("not ignored at the top\n")
        nested = root / "vendor"
        nested.mkdir()
        git(nested, "init", "-q")
        (nested / "v.txt").write_text("v\n")
        git(nested, "add", "-A")
        git(nested, "commit", "-q", "-m", "v")

    repo, plain = tmp_path / "repo", tmp_path / "plain"
    repo.mkdir()
    plain.mkdir()
    git(repo, "init", "-q")
    build(repo)
    build(plain)
    expected = git_tree(repo)
    assert tree_of(repo) == expected
    assert tree_of(plain) == expected


def test_builtin_ignores_and_their_override(tmp_path, monkeypatch):
    root = tmp_path / "w"
    root.mkdir()
    (root / "app.js").write_text("x\n")
    for d in ("node_modules/pkg", "__pycache__", "build"):
        (root / d).mkdir(parents=True)
        (root / d / "f").write_text("generated\n")
    store = open_store(root)
    store.prepare()
    names = git(root, f"--git-dir={store.path}", "ls-tree", "-r", "--name-only",
                tree_of(root)).split()
    assert names == ["app.js"]
    (root / ".ckptignore").write_text("!build/\n")
    names = git(root, f"--git-dir={store.path}", "ls-tree", "-r", "--name-only",
                tree_of(root)).split()
    assert names == [".ckptignore", "app.js", "build/f"]
    monkeypatch.setenv("GITCKPT_BUILTIN_IGNORE", "off")
    names = git(root, f"--git-dir={store.path}", "ls-tree", "-r", "--name-only",
                tree_of(root)).split()
    assert "node_modules/pkg/f" in names
    assert "__pycache__/f" in names


def test_sensitive_files_never_reach_the_store(tmp_path):
    root = make_plain(tmp_path / "w")
    (root / ".env").write_text("TOKEN=marker-dir-env-1\n")
    (root / ".ssh").mkdir()
    (root / ".ssh" / "id_ed25519").write_text("marker-dir-key-2\n")
    r = service.init(root, "t")
    assert {s.path: s.reason for s in r.save.skipped} == {".env": "sensitive",
                                                               ".ssh": "sensitive"}
    for p in (root / ".gitckpt" / "objects").rglob("*"):
        if p.is_file():
            assert b"marker-dir" not in zlib.decompress(p.read_bytes())


def test_stat_cache_reads_only_what_changed(tmp_path, monkeypatch):
    root = make_plain(tmp_path / "w")
    for i in range(50):
        (root / f"f{i}.txt").write_text(f"{i}\n")
    old = 1_700_000_000
    for p in root.rglob("*"):
        os.utime(p, (old, old), follow_symlinks=False)
    tree_of(root)
    reads = []
    real = snapshot.read_regular
    monkeypatch.setattr(snapshot, "read_regular", lambda p: reads.append(p) or real(p))
    tree_of(root)
    assert reads == []
    (root / "f7.txt").write_text("seven\n")
    tree_of(root)
    assert [Path(p).name for p in reads] == ["f7.txt"]


def test_racy_and_restored_mtime_edits_are_caught(tmp_path):
    root = make_plain(tmp_path / "w")
    f = root / "same.txt"
    f.write_text("aaaa\n")
    first = tree_of(root)
    st = f.stat()
    f.write_text("bbbb\n")  # same size, within the timestamp window
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    second = tree_of(root)
    assert second != first
    old = 1_700_000_000  # an old file whose mtime is put back: ctime still moves
    os.utime(f, (old, old))
    tree_of(root)
    f.write_text("cccc\n")
    os.utime(f, (old, old))
    assert tree_of(root) not in (first, second)


def test_vanishing_files_during_a_scan(tmp_path):
    root = make_plain(tmp_path / "w")
    for i in range(5):
        (root / f"v{i}.txt").write_text(f"{i}\n")
    store = open_store(root)
    store.prepare()

    def vanish(rel):
        if rel == "v1.txt":
            (root / "v2.txt").unlink()
    with store.lock():
        store.snapshot(Scope(), progress=vanish)
    assert "v2.txt" not in git(root, f"--git-dir={store.path}", "ls-tree", "--name-only",
                               store.snapshot(Scope(), update_cache=False).tree)


def test_bad_stores_give_clear_errors_and_change_nothing(tmp_path):
    root = make_plain(tmp_path / "w")
    task = service.init(root, "t").save.task
    service.save(root, "s1")
    before = files_state(root)
    store = root / ".gitckpt"

    (store / "gitckpt" / "format").write_text("99\n")
    with pytest.raises(SchemaTooNew):
        service.resume(root)
    r = run_cli("-C", str(root), "save", "x")
    assert r.code == 1
    assert "format version 99" in r.err
    assert "Traceback" not in r.err
    (store / "gitckpt" / "format").write_text("1\n")

    head = (store / "refs" / "checkpoints" / task / "head").read_text().strip()
    obj = store / "objects" / head[:2] / head[2:]
    data = obj.read_bytes()
    os.chmod(obj, 0o600)
    obj.write_bytes(data[: len(data) // 2])  # truncated
    r = run_cli("-C", str(root), "log")
    assert r.code == 1, r.err
    assert "corrupt" in r.err, r.err
    assert "fsck" in r.err, r.err
    obj.write_bytes(data)

    steps = store / "refs" / "checkpoints" / task / "head"
    steps.write_text("0" * 40 + "\n")  # a ref to a missing object
    r = run_cli("-C", str(root), "resume")
    assert r.code == 1
    assert "missing" in r.err
    assert "Traceback" not in r.err
    steps.write_text(head + "\n")
    assert files_state(root) == before


def test_pointer_to_a_missing_store(tmp_path):
    root = make_plain(tmp_path / "w")
    (root / ".gitckpt").write_text(f"gitckpt-store: {tmp_path / 'gone'}\n")
    r = run_cli("-C", str(root), "tasks")
    assert r.code == 1
    assert "does not exist" in r.err
    assert "hint:" in r.err
    (root / ".gitckpt").write_text("garbage\n")
    r = run_cli("-C", str(root), "tasks")
    assert r.code == 1
    assert "not a gitckpt store pointer" in r.err


def test_a_subfolder_uses_the_parent_store(hermetic):
    root = make_plain(hermetic / "w")  # parent stores count only below the home folder
    task = service.init(root, "t").save.task
    assert service.resume(root / "src").info.id == task


def test_dir_store_needs_only_the_standard_library(tmp_path):
    root = make_plain(tmp_path / "w")
    code = ("import sys; sys.modules['pygit2'] = None\n"
            "from gitckpt.store.plain.store import DirStore\n"
            "from gitckpt.engine.timeline import Timeline\n"
            "from gitckpt.engine.step_input import prepare, prepare_task\n"
            "from gitckpt.core.operations import InitRequest, SaveRequest\n"
            "from pathlib import Path\n"
            f"root = Path({str(root)!r})\n"
            "tl = Timeline(DirStore(root, root / '.gitckpt'))\n"
            "task, r = tl.init(prepare_task(InitRequest('stdlib only')))\n"
            "print(tl.save(prepare(SaveRequest('s', conclusion='c'))).step)\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "1", p.stderr


def test_cached_ignore_decisions_follow_rule_and_kind_changes(tmp_path):
    """The decision cache must give what a fresh scan (and git) gives after each change."""
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    for root in (repo, plain):
        root.mkdir()
        (root / "out").write_text("a file named like an ignored folder\n")
        (root / "x.log").write_text("log\n")
        (root / "keep.txt").write_text("k\n")
        (root / ".gitignore").write_text("out/\n")
    git(repo, "init", "-q")
    steps = [
        lambda r: None,
        lambda r: ((r / "out").unlink(), (r / "out").mkdir(), (r / "out" / "o").write_text("o")),
        lambda r: (r / ".gitignore").write_text("*.log\n"),
        lambda r: (r / "sub").mkdir() or (r / "sub" / ".gitignore").write_text("!x.log\n"),
        lambda r: (r / "sub" / "x.log").write_text("re-included\n"),
        lambda r: (r / ".ckptignore").write_text("keep.txt\n"),
    ]
    for step in steps:
        step(repo)
        step(plain)
        excluded = ["keep.txt"] if (repo / ".ckptignore").exists() else []
        assert tree_of(plain) == git_tree(repo, *excluded), step


GITIGNORE_CASES = {
    "whitelist": {".gitignore": "*\n!*/\n!*.c\n", "src/x/a.c": "", "doc/r.c": "", "top.c": "",
                  "n.txt": ""},
    "double star whitelist": {".gitignore": "**\n!**/\n!a/b/c/keep\n", "a/b/c/keep": "",
                              "a/b/other": ""},
    "folder contents": {".gitignore": "foo/**\n!foo/keep\n", "foo/keep": "", "foo/g": ""},
    "folder contents, folders only": {".gitignore": "foo/**/\n", "foo/g": "", "foo/d/x": ""},
    "negation in a nested file": {".gitignore": "*.txt\n", "sub/.gitignore": "!docs\n",
                                  "sub/docs/x.txt": "", "sub/docs/y.md": ""},
    "bom, spaces, escapes": {".gitignore": "\ufeffbom\n\\ lead\ntrail   \n\\#hash\n",
                             "bom": "", " lead": "", "trail": "", "#hash": "", "keep": ""},
    "classes": {".gitignore": "[[:digit:]]z\n[!a]q\n", "5z": "", "az": "", "bq": "", "aq": ""},
    "anchored and deep": {".gitignore": "/top\nmid/*.o\n**/deep\n", "top": "", "x/top": "",
                          "mid/a.o": "", "mid/s/b.o": "", "y/z/deep": "", "deep": ""},
    "crlf lines": {".gitignore": "a.log\r\nb.log\r\n", "a.log": "", "b.log": "", "c.log": ""},
}


@pytest.mark.parametrize("case", sorted(GITIGNORE_CASES))
def test_gitignore_semantics_match_git(tmp_path, monkeypatch, case):
    monkeypatch.setenv("GITCKPT_BUILTIN_IGNORE", "off")
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    for root in (repo, plain):
        for rel, text in GITIGNORE_CASES[case].items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text or rel, encoding="utf-8")
    git(repo, "init", "-q")
    assert tree_of(plain) == git_tree(repo), case


def test_store_discovery_is_not_fooled(tmp_path):
    parent = tmp_path / "shared"
    (parent / "proj").mkdir(parents=True)
    (parent / "other").mkdir()
    (parent / "other" / "diary.txt").write_text("private\n")
    (parent / ".gitckpt").mkdir()  # an empty folder someone left: not a store
    service.init(parent / "proj", "mine")
    assert (parent / "proj" / ".gitckpt").is_dir()
    assert not any((parent / ".gitckpt").iterdir())
    victim = tmp_path / "victim"
    victim.mkdir()
    dl = tmp_path / "downloaded"
    dl.mkdir()
    os.symlink(victim, dl / ".gitckpt")
    r = run_cli("-C", str(dl), "init", "t")
    assert r.code == 1
    assert "symbolic link" in r.err
    assert not any(victim.iterdir())
    ws = tmp_path / "ws"
    ws.mkdir()
    os.symlink(ws, tmp_path / "wslink")
    r = run_cli("-C", str(ws), "init", "t", "--store", str(tmp_path / "wslink"))
    assert r.code == 1
    assert "cannot be the workspace itself" in r.err
    (ws / "src").mkdir()
    (ws / "src" / "main.py").write_text("x\n")
    r = run_cli("-C", str(ws), "init", "t", "--store", str(ws / "src"))
    assert r.code == 1
    assert "not a gitckpt store" in r.err


def test_cache_is_written_only_after_the_objects(tmp_path):
    root = make_plain(tmp_path / "w")
    store = open_store(root)
    store.prepare()
    order = []
    real_flush, real_write = store.flush, store._scanner._write_cache
    store._scanner.flush = lambda: (order.append("flush"), real_flush())[1]
    store._scanner._write_cache = lambda d: (order.append("cache"), real_write(d))[1]
    with store.lock():
        store.snapshot(Scope())
    assert order == ["flush", "cache"]


def test_a_lowered_size_limit_applies_to_cached_files(tmp_path, monkeypatch):
    root = make_plain(tmp_path / "w")
    (root / "big.txt").write_text("x" * 1000)
    tree_of(root)
    monkeypatch.setenv("GITCKPT_MAX_FILE_SIZE", "100")
    store = open_store(root)
    with store.lock():
        snap = store.snapshot(Scope.load(str(root)))
    assert [(s.path, s.reason) for s in snap.skipped] == [("big.txt", "too_large")]


def test_an_empty_dot_git_folder_is_a_plain_folder(tmp_path):
    repo, plain = tmp_path / "repo", tmp_path / "plain"
    for root in (repo, plain):
        (root / "sub" / ".git").mkdir(parents=True)
        (root / "sub" / "f").write_text("f\n")
    git(repo, "init", "-q")
    assert tree_of(plain) == git_tree(repo)
