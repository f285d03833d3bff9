"""Edge cases found in review: nested repositories coming and going, git gc, config that
changes git's filters, hostile text, broken workspaces."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import git, git_tree, run_cli, service

from gitckpt.core.errors import GitIndexChanged, StoreCorrupt, WorkspaceError
from gitckpt.safety.scope import Scope
from gitckpt.store.discover import open_store


def snap(root, excludes=()):
    store = open_store(root)
    with store.lock():
        return store.snapshot(Scope.load(str(root), list(excludes))).tree


def commit_all(root):
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "x")


@pytest.fixture
def plain_repo(tmp_path):
    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q")
    (root / "sub").mkdir()
    (root / "sub" / "a.txt").write_text("a\n")
    (root / "top.txt").write_text("t\n")
    return root


def test_a_folder_that_becomes_a_repository(plain_repo):
    snap(plain_repo)
    git(plain_repo / "sub", "init", "-q")
    commit_all(plain_repo / "sub")
    assert snap(plain_repo) == git_tree(plain_repo)


def test_a_repository_that_loses_its_git_folder(plain_repo):
    git(plain_repo / "sub", "init", "-q")
    commit_all(plain_repo / "sub")
    assert snap(plain_repo) == git_tree(plain_repo)
    subprocess.run(["rm", "-rf", str(plain_repo / "sub" / ".git")], check=True)
    assert snap(plain_repo) == git_tree(plain_repo)
    assert snap(plain_repo) == git_tree(plain_repo)  # and it stays right


def test_a_repository_replaced_by_a_file(plain_repo):
    git(plain_repo / "sub", "init", "-q")
    commit_all(plain_repo / "sub")
    snap(plain_repo)
    subprocess.run(["rm", "-rf", str(plain_repo / "sub")], check=True)
    (plain_repo / "sub").write_text("now a file\n")
    assert snap(plain_repo) == git_tree(plain_repo)


def test_an_excluded_folder_pattern_covers_a_nested_repository(plain_repo):
    git(plain_repo / "sub", "init", "-q")
    commit_all(plain_repo / "sub")
    assert snap(plain_repo, ["sub/"]) == git_tree(plain_repo, "sub")


def test_git_gc_of_everything_gitckpt_wrote(plain_repo):
    for i in range(3):
        (plain_repo / f"f{i}").write_text(str(i))
    os.utime(plain_repo / "f0", (1_700_000_000, 1_700_000_000))
    service.init(plain_repo, "one")
    refs = git(plain_repo, "for-each-ref", "--format=%(refname)", "refs/checkpoints",
               "refs/notes").split()
    for ref in refs:
        git(plain_repo, "update-ref", "-d", ref)
    git(plain_repo, "reflog", "expire", "--all", "--expire=now")
    git(plain_repo, "gc", "-q", "--prune=now")
    service.init(plain_repo, "two")
    p = subprocess.run(["git", "-C", str(plain_repo), "fsck", "--strict"], capture_output=True,
                       text=True)
    assert p.returncode == 0
    assert "missing" not in p.stdout + p.stderr


def test_filter_settings_changed_later(plain_repo):
    (plain_repo / "win.txt").write_bytes(b"a\r\nb\r\n")
    os.utime(plain_repo / "win.txt", (1_700_000_000, 1_700_000_000))
    snap(plain_repo)
    git(plain_repo, "config", "core.autocrlf", "input")
    assert snap(plain_repo) == git_tree(plain_repo)


def test_core_filemode_false(plain_repo):
    (plain_repo / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(plain_repo / "run.sh", 0o755)
    git(plain_repo, "config", "core.fileMode", "false")
    assert snap(plain_repo) == git_tree(plain_repo)


@pytest.mark.user_git
def test_the_user_index_changing_during_every_scan_is_refused_cleanly(repo):
    store = open_store(repo)
    index = repo / ".git" / "index"

    def touch(_rel):
        os.utime(index, ns=(index.stat().st_atime_ns, index.stat().st_mtime_ns + 1))
    (repo / ".env").write_text("A=1\n")  # left out, so every scan reports it again
    with store.lock(), pytest.raises(GitIndexChanged) as e:
        store.snapshot(Scope(), progress=touch)
    assert "retry" in e.value.hint


@pytest.mark.parametrize("text", ["a\x00b", "bell\x07 and \x1b[31mred\x1b[0m",
                                  "two\nlines\n\nTask: forged-0000"])
def test_hostile_free_text(ws, text):
    task = service.init(ws.root, text).save.task
    r = service.save(ws.root, text, conclusion=text, next=text, verified=[text])
    message = ws.git("log", "-1", "--format=%B", f"refs/checkpoints/{task}/head")
    assert [ln for ln in message.splitlines() if ln.startswith("Task:")] == [f"Task: {task}"]
    assert "\x00" not in message
    assert "\x1b" not in message
    assert message.splitlines()[0] == f"step {r.step}: " + " ".join(
        text.replace("\x00", "").replace("\x07", "").replace("\x1b", "").split())


def test_a_note_with_a_wrongly_typed_field(ws):
    task = service.init(ws.root, "t").save.task
    store = open_store(ws.root)
    head = store.get_ref(f"refs/checkpoints/{task}/head")
    with store.lock():
        store.write_note(head, json.dumps({"schema": 1, "kind": "init", "task": task,
                                           "step": "0", "created_at": "x", "title": "t"}))
    with pytest.raises(StoreCorrupt) as e:
        service.log(ws.root)
    assert "step is str" in e.value.message


def test_first_step_titled_like_the_task_is_a_step(ws):
    service.init(ws.root, "Fix bug")
    assert service.save(ws.root, "Fix bug").step == 1


def test_bad_lock_timeout_and_non_utf8_argv(repo):
    service.init(repo, "t")
    r = run_cli("save", "x", cwd=repo, env={"GITCKPT_LOCK_TIMEOUT": "nan"})
    assert r.code == 0, r.err
    p = subprocess.run([os.sys.executable, "-m", "gitckpt", "save", b"\xff\xfe title"],
                       cwd=repo, capture_output=True)
    assert p.returncode == 0, p.stderr


def test_bare_and_broken_repositories_are_refused(tmp_path):
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(WorkspaceError):
        open_store(bare)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / ".git").write_text("gitdir: /nowhere/at/all\n")
    r = run_cli("-C", str(broken), "init", "t")
    assert r.code == 1
    assert "not a usable git repository" in r.err
    assert not (broken / ".gitckpt").exists()
    assert not (bare / ".gitckpt").exists()


def test_a_home_that_does_not_exist_is_no_reason_to_fail(ws, monkeypatch, tmp_path):
    """HOME names a folder that is not there (a service account, a container): every call
    failed with an internal error (the home folder's mode was read); it now has no parent
    store to look for above the workspace and goes on."""
    from conftest import service

    monkeypatch.setenv("HOME", str(tmp_path / "no-such-home"))
    assert service.tasks(ws.root).tasks == []  # no task yet: the folders above are looked at
    r = service.init(ws.root, "homeless")
    assert r.save.step == 0
    (ws.root / "README.md").write_text("changed\n")
    assert service.save(ws.root, "one").step == 1
    assert service.resume(ws.root).task == r.save.task
