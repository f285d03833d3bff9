"""Checkpoints across machines through ordinary git remotes: a bare repository over
file://, and a real `git daemon` on 127.0.0.1, both started by the fixtures; a git repository
and a plain folder on each side."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import RepoGuard, fsck, git, make_plain, make_repo, run_cli, service

from gitckpt.core.errors import (
    Diverged,
    GitckptError,
    InvalidArgument,
    NeedsConfirmation,
    RemoteFailed,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def machines(tmp_path):
    """A bare remote, and two clones of it with the same first commit: machine A and B."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a = make_repo(tmp_path / "a")
    git(a, "push", "-q", str(remote), "HEAD:refs/heads/main")
    git(tmp_path, "clone", "-q", str(remote), str(tmp_path / "b"))
    return remote, a, tmp_path / "b"


def remote_refs(remote: Path) -> dict[str, str]:
    out = git(remote, "for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split(" ", 1) for line in out.splitlines())


def notes_of(root: Path, task: str, git_dir: str | None = None) -> dict[str, str]:
    """commit -> note text of every step of the task, read with plain git."""
    where = [f"--git-dir={git_dir}"] if git_dir else []
    out = git(root, *where, "log", "--notes=checkpoints", "--format=%H%x00%N%x01",
              f"refs/checkpoints/{task}/head")
    pairs = (chunk.strip("\n").split("\0") for chunk in out.split("\1") if chunk.strip())
    return {c: n.strip() for c, n in pairs}


def test_push_fetch_continue_and_back(machines, tmp_path):
    remote, a, b = machines
    url = remote.as_uri()
    guard_a, guard_b = RepoGuard(a), RepoGuard(b)
    config_a = (a / ".git" / "config").read_bytes()
    task = service.init(a, "travelling task", goal="across machines").save.task
    (a / "step1.txt").write_text("one\n")
    service.save(a, "step one", conclusion="the first")
    with pytest.raises(NeedsConfirmation) as asked:
        service.push(a, url)
    said = asked.value.message
    assert str(remote) in said, said
    assert "1 steps" in said, said
    assert "step1.txt" in said, said
    assert "notes.txt" in said
    assert "README.md" not in said
    assert remote_refs(remote).keys() == {"refs/heads/main"}  # nothing went before --yes
    assert service.push(a, url, confirm=True).tasks[0].first
    guard_a.check(status_changes=True)
    assert (a / ".git" / "config").read_bytes() == config_a  # no remote, refspec or notes
    listed = service.fetch(b, url)
    row = listed.tasks[0].to_dict()
    assert [t.task for t in listed.tasks] == [task]
    assert row["name"] == "travelling task"
    assert row["steps"] == 1
    assert row["last_activity"]
    got = service.fetch(b, url, task=task)
    assert got.created
    assert got.steps == 1
    guard_b.check(status_changes=True)
    assert "the first" in service.resume(b, task=task).text
    service.switch(b, task)
    service.restore(b, "head", apply=True)
    assert (b / "step1.txt").read_text() == "one\n"
    (b / "step2.txt").write_text("two\n")
    service.save(b, "step two on B", conclusion="continued")
    service.save(b, "step three on B")
    assert service.push(b, url, confirm=True).tasks[0].first  # B's first push of it
    back = service.fetch(a, url, task=task)
    assert back.moved
    assert not back.created
    assert service.open_timeline(a).head(task).n == 3
    assert "continued" in service.resume(a).text
    # both sides hold the same steps, trees and notes
    assert git(a, "rev-parse", f"refs/checkpoints/{task}/head^{{tree}}") == \
        git(b, "rev-parse", f"refs/checkpoints/{task}/head^{{tree}}")
    assert notes_of(a, task) == notes_of(b, task) != {}
    # a fresh clone of the remote reads the steps' meaning with plain git
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", "--bare", str(remote), str(fresh))
    git(fresh, "fetch", "-q", str(remote), "+refs/checkpoints/*:refs/checkpoints/*",
        "+refs/notes/*:refs/notes/*")
    shown = git(fresh, "log", f"--notes=gitckpt/{task}", "--format=%s%n%N",
                f"refs/checkpoints/{task}/head")
    assert "step two on B" in shown
    assert '"conclusion": "continued"' in shown
    # only checkpoints travelled: the remote's branches are what A pushed by hand
    assert {r for r in remote_refs(remote)
            if not r.startswith((f"refs/checkpoints/{task}/", f"refs/notes/gitckpt/{task}"))
            } == {"refs/heads/main"}
    guard_a.check(status_changes=True)
    guard_b.check(status_changes=True)
    for side in (a, b):
        assert service.doctor(side).healthy
    fsck(remote)


def test_the_first_push_asks_later_pushes_do_not(machines):
    remote, a, _ = machines
    url = remote.as_uri()
    one = service.init(a, "asks once").save.task
    assert service.push(a, url, confirm=True).tasks[0].first
    service.save(a, "more")
    assert not service.push(a, url).tasks[0].first  # no confirmation needed this time
    two = service.init(a, "another task").save.task
    with pytest.raises(NeedsConfirmation):
        service.push(a, url)  # a new task asks again
    with pytest.raises(NeedsConfirmation):
        service.push(a, str(remote), task=one)  # the same remote by another URL asks too
    pushed = service.push(a, url, all_tasks=True, confirm=True)
    assert {t.task: t.first for t in pushed.tasks} == {one: False, two: True}


def test_divergent_lines_are_refused_both_ways_and_kept_with_as(machines):
    remote, a, b = machines
    url = remote.as_uri()
    task = service.init(a, "two lines").save.task
    service.push(a, url, confirm=True)
    service.fetch(b, url, task=task)
    service.switch(b, task)
    service.save(b, "B's step")
    service.push(b, url, confirm=True)
    service.save(a, "A's step")
    before = remote_refs(remote)
    with pytest.raises(Diverged) as refused:
        service.push(a, url)
    head_a = service.open_timeline(a).head(task).commit
    theirs = before[f"refs/checkpoints/{task}/head"]
    assert head_a[:12] in refused.value.message
    assert theirs[:12] in refused.value.message
    assert "--as" in refused.value.hint
    assert remote_refs(remote) == before
    with pytest.raises(Diverged) as fetched:
        service.fetch(a, url, task=task)
    assert head_a[:12] in fetched.value.message
    assert theirs[:12] in fetched.value.message
    assert "--as" in fetched.value.hint
    assert service.open_timeline(a).head(task).commit == head_a  # nothing moved
    kept = service.fetch(a, url, task=task, as_id="two-lines-b")
    assert kept.created
    assert kept.source == task
    assert kept.task == "two-lines-b"
    tl = service.open_timeline(a)
    assert tl.head(task).commit == head_a
    assert tl.head("two-lines-b").note.title == "B's step"
    assert "B's step" in service.resume(a, task="two-lines-b").text
    # B's line moves on: fetching it --as the same id again brings it forward
    service.save(b, "B's second step")
    service.push(b, url)
    again = service.fetch(a, url, task=task, as_id="two-lines-b")
    assert again.moved
    assert not again.created
    assert again.steps == 2
    # and A publishes its own line under another id
    with pytest.raises(Diverged) as still:
        service.push(a, url)
    assert "--as" in still.value.hint
    mine = service.push(a, url, task=task, as_id="two-lines-a", confirm=True)
    assert mine.tasks[0].task == "two-lines-a"
    assert service.fetch(b, url, task="two-lines-a").created
    assert service.open_timeline(b).head("two-lines-a").note.title == "A's step"
    for side in (a, b):
        assert service.doctor(side).healthy


def test_drifts_from_both_sides_are_kept(machines):
    remote, a, b = machines
    url = remote.as_uri()
    task = service.init(a, "drifting").save.task
    service.push(a, url, confirm=True)
    service.fetch(b, url, task=task)
    service.switch(b, task)
    (a / "on-a.txt").write_text("a\n")
    da = service.capture(a).commit
    (b / "on-b.txt").write_text("b\n")
    db = service.capture(b).commit
    service.push(b, url, confirm=True)
    with pytest.raises(Diverged) as refused:
        service.push(a, url)  # the remote's drift would be replaced: fetch first
    assert "drifts" in refused.value.message
    got = service.fetch(a, url, task=task)
    assert got.drifts_kept == 1
    assert not got.moved
    drifts = service.open_timeline(a).drifts(task, 0)
    assert next(d.commit for d in drifts) == da
    assert drifts[-1].tree == service.open_timeline(b).record(db).tree  # B's, copied after
    service.push(a, url)  # a fast-forward now: B's drift is an ancestor
    again = service.fetch(b, url, task=task)
    assert again.drifts_kept == 0
    assert len(service.open_timeline(b).drifts(task, 0)) == 2
    assert service.restore(b, drifts[0].commit[:12]).plan  # A's drift is there on B too
    for side in (a, b):
        assert service.doctor(side).healthy


def test_a_plain_folder_pushes_and_an_empty_folder_fetches(tmp_path, hermetic):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    a = make_plain(hermetic / "a")
    task = service.init(a, "plain travel").save.task
    (a / "more.txt").write_text("more\n")
    service.save(a, "one", conclusion="plain")
    with pytest.raises(NeedsConfirmation) as asked:
        service.push(a, remote.as_uri())
    assert "more.txt" in asked.value.message  # a plain folder: every file is published
    service.push(a, remote.as_uri(), confirm=True)
    b = hermetic / "b"
    b.mkdir()
    assert [t.task for t in service.fetch(b, remote.as_uri()).tasks] == [task]
    assert not (b / ".gitckpt").exists()  # a listing writes nothing
    got = service.fetch(b, remote.as_uri(), task=task)
    assert got.created
    service.switch(b, task)
    service.restore(b, "head", apply=True)
    assert (b / "more.txt").read_text() == "more\n"
    service.save(b, "two on b")
    service.push(b, remote.as_uri(), confirm=True)
    assert service.fetch(a, remote.as_uri(), task=task).moved
    assert service.open_timeline(a).head(task).note.title == "two on b"
    for side in (a, b):
        assert service.doctor(side).healthy
        p = subprocess.run(["git", f"--git-dir={side / '.gitckpt'}", "fsck", "--strict",
                            "--no-dangling"], capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr


def test_fetching_one_task_brings_only_its_objects(machines):
    remote, a, b = machines
    url = remote.as_uri()
    one = service.init(a, "first").save.task
    (a / "only-one.bin").write_bytes(b"one " * 1000)
    service.save(a, "one's step")
    service.push(a, url, confirm=True)
    service.init(a, "second")
    (a / "only-one.bin").unlink()
    (a / "only-two.bin").write_bytes(b"two " * 1000)
    two = service.save(a, "two's step").task
    service.push(a, url, confirm=True)
    blob_two = git(a, "rev-parse", f"refs/checkpoints/{two}/head:only-two.bin").strip()
    blob_one = git(a, "rev-parse", f"refs/checkpoints/{one}/head:only-one.bin").strip()
    service.fetch(b, url, task=one)
    assert subprocess.run(["git", "-C", str(b), "cat-file", "-e", blob_one]).returncode == 0
    assert subprocess.run(["git", "-C", str(b), "cat-file", "-e", blob_two],
                          capture_output=True).returncode != 0


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def daemon(tmp_path):
    """`git daemon` serving a bare repository on 127.0.0.1, pushes allowed."""
    base = tmp_path / "served"
    base.mkdir()
    git(tmp_path, "init", "-q", "--bare", str(base / "remote.git"))
    port = free_port()
    proc = subprocess.Popen(["git", "daemon", "--reuseaddr", "--listen=127.0.0.1",
                             f"--port={port}", f"--base-path={base}", "--export-all",
                             "--enable=receive-pack", str(base)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"git://127.0.0.1:{port}/remote.git"
    try:
        for _ in range(100):
            if subprocess.run(["git", "ls-remote", url], capture_output=True).returncode == 0:
                break
            time.sleep(0.1)
        else:
            pytest.fail("git daemon did not start")
        yield url, base / "remote.git"
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.mark.parametrize("kind", ["git", "dir"])
def test_through_a_git_daemon(daemon, tmp_path, hermetic, kind):
    url, bare = daemon
    make = make_repo if kind == "git" else make_plain
    base = tmp_path if kind == "git" else hermetic
    a, b = make(base / "a"), make(base / "b")
    guard = RepoGuard(b) if kind == "git" else None
    task = service.init(a, "over the wire").save.task
    service.save(a, "one")
    service.push(a, url, confirm=True)
    assert [t.task for t in service.fetch(b, url).tasks] == [task]
    assert service.fetch(b, url, task=task).created
    assert service.open_timeline(b).head(task).n == 1
    service.switch(b, task)
    service.save(b, "two, over the wire")
    service.push(b, url, confirm=True)
    assert service.fetch(a, url, task=task).moved
    shown = git(bare, "log", f"--notes=gitckpt/{task}", "--format=%s %N",
                f"refs/checkpoints/{task}/head")
    assert "two, over the wire" in shown
    assert '"kind": "step"' in shown
    if guard is not None:
        guard.check(status_changes=True)
    fsck(bare)


def test_a_thousand_tasks_list_in_one_call(machines):
    remote, a, _ = machines
    commit = git(remote, "rev-parse", "refs/heads/main").strip()
    # 1,000 tasks of 50 steps, each with its card, made with plumbing in one fast-import
    stream = []
    for i in range(1000):
        card = json.dumps({"task": f"t{i:04d}", "name": f"task {i}", "step": 49,
                           "updated": "2026-12-01T10:00:00Z"})
        body = f"card: task {i}\n\n{card}\n"
        stream += [f"commit refs/checkpoints/t{i:04d}/card",
                   "committer gitckpt <gitckpt@localhost> 1764583200 +0000",
                   f"data {len(body.encode())}", body, "deleteall", ""]
    subprocess.run(["git", f"--git-dir={remote}", "fast-import", "--quiet"],
                   input="\n".join(stream) + "\n", text=True, check=True)
    lines = [f"create refs/checkpoints/t{i:04d}/{ref} {commit}"
             for i in range(1000) for ref in ["head", *(f"steps/{n}" for n in range(50))]]
    subprocess.run(["git", f"--git-dir={remote}", "update-ref", "--stdin"],
                   input="\n".join(lines) + "\n", text=True, check=True)
    before = subprocess.run(["git", "-C", str(a), "count-objects", "-v"], capture_output=True,
                            text=True).stdout
    listed = service.fetch(a, remote.as_uri())
    rows = [t.to_dict() for t in listed.tasks]
    assert len(rows) == 1000
    assert all(r["steps"] == 49 for r in rows)
    assert rows[7]["name"] == "task 7"
    assert rows[7]["last_activity"] == "2026-12-01T10:00:00Z"
    after = subprocess.run(["git", "-C", str(a), "count-objects", "-v"], capture_output=True,
                           text=True).stdout
    assert before == after  # the cards were read in a throwaway repository


def test_credentials_in_a_url_are_never_shown(machines):
    from gitckpt.transfer.git import shown

    assert shown("https://user:s3cret@example.com/x.git failed") == \
        "https://***@example.com/x.git failed"
    _, a, _ = machines
    service.init(a, "secret url")
    with pytest.raises(RemoteFailed) as failed:
        service.push(a, "https://user:s3cret@127.0.0.1:9/none.git", confirm=True)
    assert "s3cret" not in failed.value.message + (failed.value.hint or "")
    with pytest.raises(InvalidArgument):
        service.push(a, "--upload-pack=touch /tmp/x", confirm=True)  # not an option for git


def test_no_hook_runs(machines, tmp_path):
    remote, a, _ = machines
    hook = remote / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ntouch {tmp_path / 'remote-hook-ran'}\n")
    hook.chmod(0o755)
    local = a / ".git" / "hooks" / "pre-push"
    local.write_text(f"#!/bin/sh\ntouch {tmp_path / 'local-hook-ran'}\nexit 1\n")
    local.chmod(0o755)
    guard = RepoGuard(a)
    service.init(a, "no hooks")
    service.push(a, remote.as_uri(), confirm=True)
    assert not (tmp_path / "local-hook-ran").exists()
    # the remote's own hooks are the remote's business: gitckpt runs none of the user's
    assert (tmp_path / "remote-hook-ran").exists()
    guard.check(status_changes=True)


def test_config_remote_is_gitckpts_own_setting(machines):
    remote, a, b = machines
    config = (a / ".git" / "config").read_bytes()
    with pytest.raises(InvalidArgument) as none:
        service.push(a)
    assert "config remote" in none.value.hint
    assert service.config_remote(a, "origin").remote == "origin"
    git(a, "remote", "add", "origin", str(remote))  # the user's own remote, by its name
    config = (a / ".git" / "config").read_bytes()
    task = service.init(a, "by name").save.task
    assert service.push(a, confirm=True).remote == str(remote)
    assert (a / ".git" / "config").read_bytes() == config
    assert service.config_remote(a).remote == "origin"
    assert service.config_remote(a, unset=True).remote is None
    assert service.fetch(b, "origin", task=task).created  # b's origin is the remote too


def test_the_cli_face(machines, tmp_path):
    remote, a, b = machines
    url = remote.as_uri()
    r = run_cli("-C", str(a), "init", "cli travel", "--goal", "by hand")
    assert r.code == 0, r.err
    (a / "made.txt").write_text("made\n")
    assert run_cli("-C", str(a), "save", "made a file").code == 0
    asked = run_cli("-C", str(a), "push", url)
    assert asked.code == 1
    assert "--yes" in asked.err
    assert "made.txt" in asked.err
    assert "Traceback" not in asked.err
    r = run_cli("-C", str(a), "push", url, "--yes")
    assert r.code == 0, r.err
    assert "first push" in r.out, r.err
    r = run_cli("-C", str(b), "fetch", url)
    assert r.code == 0, r.err
    assert "cli travel" in r.out, r.err
    task = json.loads(run_cli("-C", str(b), "--json", "fetch", url).out)["tasks"][0]["task"]
    r = run_cli("-C", str(b), "--json", "fetch", url, "--task", task)
    assert r.code == 0, r.err
    assert json.loads(r.out)["created"], r.err
    r = run_cli("-C", str(b), "switch", task)
    assert r.code == 0, r.err
    r = run_cli("-C", str(b), "restore", "head", "--apply")
    assert r.code == 0, r.err
    assert (b / "made.txt").read_text() == "made\n", r.err
    r = run_cli("-C", str(b), "config", "remote", url)
    assert r.code == 0, r.err
    assert run_cli("-C", str(b), "save", "continued").code == 0
    r = run_cli("-C", str(b), "push", "--yes")
    assert r.code == 0, r.err
    r = run_cli("-C", str(a), "fetch", url, "--task", task)
    assert r.code == 0, r.err
    assert "moved forward" in r.out, r.err
    bad = run_cli("-C", str(a), "fetch", url, "--task", "no-such-task")
    assert bad.code == 1
    assert "holds no task" in bad.err
    assert "Traceback" not in bad.err
    bad = run_cli("-C", str(a), "fetch", "/nowhere/at/all.git")
    assert bad.code == 1
    assert "hint:" in bad.err
    assert "Traceback" not in bad.err


def test_import_checkout_puts_the_heads_files_here(tmp_path, hermetic):
    a = make_plain(hermetic / "a")
    service.init(a, "packaged")
    (a / "result.txt").write_text("the result\n")
    service.save(a, "made the result")
    service.export(a, hermetic / "pkg")
    b = hermetic / "b"
    b.mkdir()
    r = run_cli("-C", str(b), "import", str(hermetic / "pkg"), "--checkout")
    assert r.code == 0, r.err
    assert "Undo with" in r.out, r.err
    assert (b / "result.txt").read_text() == "the result\n"
    assert (b / "src" / "app.py").exists()


def test_a_fetch_writes_no_ref_the_remotes_config_names(machines):
    remote, a, b = machines
    task = service.init(a, "config refspecs").save.task
    service.push(a, remote.as_uri(), confirm=True)
    git(b, "config", "remote.origin.fetch", "+refs/*:refs/*")  # a mirror-style refspec
    guard = RepoGuard(b)
    assert service.fetch(b, "origin", task=task).created
    service.switch(b, task)
    (b / "local.txt").write_text("local\n")
    local = service.save(b, "a step only here").commit
    assert not service.fetch(b, "origin", task=task).moved
    assert service.open_timeline(b).head(task).commit == local  # not moved back
    guard.check(status_changes=True)
    git(b, "config", "remote.origin.fetch", "+refs/*:refs/remotes/origin/*")
    guard.reset()
    service.fetch(b, "origin", task=task)
    assert not git(b, "for-each-ref", "refs/remotes/origin/checkpoints",
                   "refs/remotes/origin/notes")
    guard.check(status_changes=True)


def test_credentials_stay_out_of_hints_and_settings(machines, tmp_path):
    remote, a, b = machines
    secret = "https://tok:p@ss@example.invalid/"
    git(a, "config", f"url.{remote.parent}/.insteadOf", secret)
    git(b, "config", f"url.{remote.parent}/.insteadOf", secret)
    url = secret + remote.name
    task = service.init(a, "secret").save.task
    service.push(a, url, confirm=True)
    service.fetch(b, url, task=task)
    service.switch(b, task)
    service.save(b, "b")
    service.push(b, url, confirm=True)
    service.save(a, "a")
    for call in (lambda: service.push(a, url), lambda: service.fetch(a, url, task="nosuch")):
        with pytest.raises((Diverged, InvalidArgument)) as e:
            call()
        said = json.dumps(e.value.to_dict())
        assert "p@ss" not in said, said
        assert "tok" not in said, said
    with pytest.raises(InvalidArgument) as kept:  # gitckpt keeps no credentials
        service.config_remote(a, url)
    said = json.dumps(kept.value.to_dict())
    assert "p@ss" not in said, said
    assert "config remote https://example.invalid/" in said, said
    assert service.config_remote(a).remote is None
    r = run_cli("-C", str(a), "--json", "push", url)
    assert r.code == 1
    assert "p@ss" not in r.out + r.err
    assert "tok:" not in r.out + r.err


def test_a_push_after_compress_keeps_the_remotes_drifts(machines):
    remote, a, b = machines
    url = remote.as_uri()
    task = service.init(a, "compressed").save.task
    (a / "d.txt").write_text("drift\n")
    drift = service.capture(a).commit
    service.save(a, "one")
    service.push(a, url, confirm=True)
    assert service.compress(a, keep="0s", min_steps=0).to_dict()
    assert not git(a, "for-each-ref", f"refs/checkpoints/{task}/drifts/")
    service.save(a, "two")
    service.push(a, url)  # the remote keeps its drifts/0; nothing to fetch first
    assert remote_refs(remote)[f"refs/checkpoints/{task}/drifts/0"] == drift
    service.fetch(b, url, task=task)
    assert [d.commit for d in service.open_timeline(b).drifts(task, 0)] == [drift]
    assert service.doctor(b).healthy


def test_relative_paths_are_the_workspaces(machines, tmp_path):
    remote, a, b = machines
    task = service.init(a, "relative").save.task
    rel = os.path.relpath(remote, a)
    r = run_cli("push", rel, "--yes", cwd=a)
    assert r.code == 0, r.err
    git(b, "remote", "add", "rel", os.path.relpath(remote, b))
    r = run_cli("-C", str(b), "fetch", "rel")
    assert r.code == 0, r.err
    assert task in r.out, r.err


def test_the_listing_uses_the_repositorys_own_settings(machines, hermetic):
    remote, a, b = machines
    task = service.init(a, "settings").save.task
    service.push(a, remote.as_uri(), confirm=True)
    with open(hermetic / ".gitconfig", "a") as f:
        f.write("[protocol \"file\"]\n\tallow = never\n")
    git(b, "config", "protocol.file.allow", "always")
    listed = service.fetch(b, "origin")
    assert [t.task for t in listed.tasks] == [task]
    assert listed.tasks[0].name == "settings"


def push_crafted_drift(a: Path, remote: Path, task: str, tree: str) -> None:
    """Give task's step 0 a drift over `tree` with a drift note, and push it as a store
    crafted by hand would: gitckpt pushes what the store holds."""
    head = git(a, "rev-parse", f"refs/checkpoints/{task}/head").strip()
    drift = git(a, "commit-tree", "-m", "crafted", "-p", head, tree).strip()
    note = git(a, "notes", "--ref=checkpoints", "show", head).replace('"kind": "init"',
                                                                      '"kind": "drift"')
    git(a, "notes", "--ref=checkpoints", "add", "-m", note, drift)
    git(a, "update-ref", f"refs/checkpoints/{task}/drifts/0", drift)
    service.push(a, remote.as_uri())


def test_a_damaged_remote_task_is_refused_before_anything_is_written(machines, tmp_path):
    remote, a, b = machines
    task = service.init(a, "to be damaged").save.task
    service.push(a, remote.as_uri(), confirm=True)
    # a drift that is no drift of the task: a commit with no note
    stray = git(a, "commit-tree", "-m", "stray", "-p",
                f"refs/checkpoints/{task}/head", f"refs/checkpoints/{task}/head^{{tree}}").strip()
    git(a, "push", "-q", str(remote), f"{stray}:refs/checkpoints/{task}/drifts/0")
    before = git(b, "for-each-ref")
    with pytest.raises(RemoteFailed) as refused:
        service.fetch(b, remote.as_uri(), task=task)
    assert "damaged" in refused.value.message
    assert git(b, "for-each-ref") == before
    # a step tree with a name no checkout may write
    git(remote, "update-ref", "-d", f"refs/checkpoints/{task}/drifts/0")
    blob = git(a, "hash-object", "-w", "--stdin", input="x").strip()
    hooks = git(a, "mktree", input=f"100644 blob {blob}\tpost-checkout\n").strip()
    dotgit = git(a, "mktree", input=f"040000 tree {hooks}\thooks\n").strip()
    bad = git(a, "mktree", input=f"040000 tree {dotgit}\t.git\n").strip()
    push_crafted_drift(a, remote, task, bad)
    with pytest.raises(RemoteFailed) as refused:
        service.fetch(b, remote.as_uri(), task=task)
    assert "unsafe name" in refused.value.message
    assert git(b, "for-each-ref") == before


def test_duplicate_entries_in_a_remote_tree_are_refused(machines):
    remote, a, b = machines
    task = service.init(a, "duplicates").save.task
    service.push(a, remote.as_uri(), confirm=True)
    blob = git(a, "hash-object", "-w", "--stdin", input="x").strip()
    sub = git(a, "mktree", input="").strip()
    raw = (b"120000 ln\0" + bytes.fromhex(blob) + b"40000 ln\0" + bytes.fromhex(sub))
    p = subprocess.run(["git", "-C", str(a), "hash-object", "-w", "-t", "tree", "--literally",
                        "--stdin"], input=raw, capture_output=True, check=True)
    bad = p.stdout.decode().strip()
    push_crafted_drift(a, remote, task, bad)
    with pytest.raises(RemoteFailed) as refused:
        service.fetch(b, remote.as_uri(), task=task)
    assert "twice" in refused.value.message
    assert not git(b, "for-each-ref", "refs/checkpoints")


def test_a_killed_fetchs_lock_files_do_not_block_the_next(machines):
    remote, a, b = machines
    task = service.init(a, "locks").save.task
    service.save(a, "one")
    service.push(a, remote.as_uri(), confirm=True)
    lock = b / ".git" / "refs" / "checkpoints" / task / "steps" / "1.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")  # what a fetch killed inside git update-ref leaves
    assert service.fetch(b, remote.as_uri(), task=task).created
    assert not lock.exists()
    assert service.doctor(b).healthy


def _remote_hook(remote, name: str, body: str) -> None:
    hook = remote / "hooks" / name
    hook.write_text("#!/bin/sh\n" + body)
    hook.chmod(0o755)


def test_a_push_sends_the_refs_as_read_and_saves_go_on_meanwhile(machines, tmp_path):
    """The lock is held while the refs are read, not while git sends them: a save during a
    slow push is not waited for, and is not pushed (it goes with the next push)."""
    import threading

    remote, a, b = machines
    task = service.init(a, "frozen").save.task
    for n in range(3):
        service.save(a, f"step {n}")
    read = service.open_timeline(a).head(task).commit
    started = tmp_path / "receiving"
    _remote_hook(remote, "pre-receive", f"cat >/dev/null; touch {started}; sleep 3\n")
    pushing = threading.Thread(target=lambda: service.push(a, remote.as_uri(), confirm=True))
    pushing.start()
    deadline = time.monotonic() + 60
    while not started.exists():
        assert time.monotonic() < deadline, "the push never reached git"
        assert pushing.is_alive(), "the push ended before git received it"
        time.sleep(0.02)
    saved = service.save(a, "while it pushes")
    assert pushing.is_alive()  # saved while git still receives: not behind the push
    pushing.join(60)
    assert remote_refs(remote)[f"refs/checkpoints/{task}/head"] == read != saved.commit
    (remote / "hooks" / "pre-receive").unlink()
    service.push(a, remote.as_uri())
    got = service.fetch(b, remote.as_uri(), task=task)
    assert got.steps == 4
    assert service.doctor(b).healthy


def test_every_task_goes_in_one_atomic_push(machines, tmp_path):
    from gitckpt.transfer import fetch as remote_fetch

    remote, a, b = machines
    tasks = []
    for i in range(3):
        tasks.append(service.init(a, f"batch {i}").save.task)
        for n in range(4):
            service.save(a, f"step {n}", conclusion=str(i))
    count = tmp_path / "pushes"
    _remote_hook(remote, "pre-receive", f"cat >/dev/null; echo push >> {count}\n")
    # one task refused by the remote: with --atomic, nothing of any task lands
    _remote_hook(remote, "update", f'case "$1" in refs/checkpoints/{tasks[1]}/*) exit 1;; '
                                   'esac\nexit 0\n')
    with pytest.raises(GitckptError):
        service.push(a, remote.as_uri(), all_tasks=True, confirm=True)
    assert not [r for r in remote_refs(remote) if r.startswith("refs/checkpoints/")]
    (remote / "hooks" / "update").unlink()
    count.unlink()
    pushed = service.push(a, remote.as_uri(), all_tasks=True, confirm=True)
    assert sorted(t.task for t in pushed.tasks) == sorted(tasks)
    assert count.read_text() == "push\n"  # one push, every task in it
    remote_fetch._BATCH, batch = 3, remote_fetch._BATCH
    try:
        got = service.fetch(b, remote.as_uri(), task=tasks[1])
    finally:
        remote_fetch._BATCH = batch
    assert got.created
    assert got.steps == 4
    assert service.doctor(b).healthy


def test_the_listing_honours_includeif_gitdir(machines, hermetic):
    remote, a, b = machines
    task = service.init(a, "included").save.task
    service.push(a, remote.as_uri(), confirm=True)
    extra = hermetic / "work.gitconfig"
    extra.write_text(f"[url \"{remote.parent.as_uri()}/\"]\n\tinsteadOf = https://work.invalid/\n")
    with open(hermetic / ".gitconfig", "a") as f:
        f.write(f"[includeIf \"gitdir:{b}/\"]\n\tpath = {extra}\n")
    listed = service.fetch(b, f"https://work.invalid/{remote.name}")
    assert [t.task for t in listed.tasks] == [task]
    assert listed.tasks[0].name == "included"


def test_import_checkout_asks_before_a_large_restore(tmp_path, hermetic, monkeypatch):
    a = make_plain(hermetic / "a")
    service.init(a, "small")
    service.export(a, hermetic / "pkg")
    b = make_plain(hermetic / "b")
    for i in range(30):
        (b / f"extra{i}.txt").write_text("x\n")
    r = run_cli("-C", str(b), "import", str(hermetic / "pkg"), "--checkout",
                env={"GITCKPT_CONFIRM_OVER": "10"})
    assert r.code == 1, r.err
    assert "was imported" in r.err, r.err
    assert "--yes" in r.err, r.err
    assert (b / "extra3.txt").exists()
    r = run_cli("-C", str(b), "restore", "head", "--apply", "--yes")
    assert r.code == 0, r.err
    assert not (b / "extra3.txt").exists(), r.err


def _kill_while(cmd: list[str], delay: float) -> int:
    proc = subprocess.Popen([sys.executable, "-m", "gitckpt", *cmd], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    time.sleep(delay)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # gitckpt and the git it runs
    except ProcessLookupError:
        pass
    return proc.wait(30)


def test_a_kill_during_push_or_fetch_leaves_both_sides_consistent(machines, tmp_path):
    remote, a, b = machines
    url = remote.as_uri()
    task = service.init(a, "killed").save.task
    service.push(a, url, confirm=True)
    for i in range(3):
        (a / f"big{i}.bin").write_bytes(os.urandom(3 << 20))
        service.save(a, f"big {i}")
    for i in range(120):  # many refs: a fetch's refs take long enough to be cut
        service.save(a, f"small {i}", conclusion=str(i))
    ends = set()
    for delay in (0.05, 0.2, 0.4, 0.7, 1.2, 3.0):
        ends.add(_kill_while(["-C", str(a), "push", url], delay))
        fsck(remote)
        heads = remote_refs(remote)
        ours = heads.get(f"refs/checkpoints/{task}/head")
        assert ours is not None
        steps = {k for k in heads if k.startswith(f"refs/checkpoints/{task}/steps/")}
        # all of the push or none of it: the steps the remote's head names are there
        n = len(steps) - 1
        assert git(remote, "rev-parse", f"refs/checkpoints/{task}/steps/{n}").strip() == ours
        assert service.doctor(a).healthy
    assert remote_refs(remote)[f"refs/checkpoints/{task}/head"] == \
        git(a, "rev-parse", f"refs/checkpoints/{task}/head").strip()  # the last push finished
    for delay in (0.05, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.9, 5.0):
        _kill_while(["-C", str(b), "fetch", url, "--task", task], delay)
        found = service.doctor(b).findings  # at most the quarantine of the killed fetch
        assert all(f.fixed or f.check == "quarantine" for f in found), found
        fsck(b)
    assert service.open_timeline(b).head(task).n == 123
    # what the killed fetches had fetched went with their quarantines: the last fetch
    # removed what they left (none of it was checked)
    assert not [n for n in os.listdir(b / ".git" / "objects") if n.startswith("incoming-")]
    assert ends  # the kills landed at different moments (some before, some after the end)


def test_kept_transcripts_are_listed_before_the_first_push_and_travel(machines, tmp_path):
    from gitckpt.engine import sessions

    remote, a, b = machines
    url = remote.as_uri()
    task = service.init(a, "with transcripts").save.task
    transcript = tmp_path / "session.jsonl"
    transcript.write_text("")
    tl = service.open_timeline(a)
    sessions.heard(tl.store, task, "sess-9", str(transcript), "claude")
    service.config_transcripts(a, "on")
    transcript.write_text('{"type": "user", "message": {"content": "make it so"}}\n')
    (a / "one.txt").write_text("1\n")
    service.save(a, "one")
    with pytest.raises(NeedsConfirmation) as asked:
        service.push(a, url)
    said = asked.value.message
    assert f"{task} step 1 sess-9.jsonl (" in said, said
    assert "bytes)" in said
    assert "transcript" in said
    service.push(a, url, confirm=True)
    ref = f"refs/checkpoints/{task}/transcripts/1"
    assert ref in remote_refs(remote)
    service.fetch(b, url, task=task)
    assert "make it so" in git(b, "show", f"{ref}:sess-9.jsonl")
    assert service.doctor(b).healthy
    pkg = tmp_path / "pkg"
    service.export(a, pkg)
    there = make_plain(tmp_path / "there")
    service.import_(there, pkg)
    assert service.open_timeline(there).store.get_ref(ref) is not None
    fsck(remote)


def test_transcripts_kept_after_the_first_push_are_shown_before_they_leave(machines, tmp_path):
    from gitckpt.engine import sessions

    remote, a, _ = machines
    url = remote.as_uri()
    task = service.init(a, "later transcripts").save.task
    service.push(a, url, confirm=True)
    transcript = tmp_path / "s.jsonl"
    transcript.write_text("")
    sessions.heard(service.open_timeline(a).store, task, "late", str(transcript), "claude")
    service.config_transcripts(a, "on")
    transcript.write_text('{"type": "user", "message": {"content": "later"}}\n')
    (a / "two.txt").write_text("2\n")
    service.save(a, "two")
    with pytest.raises(NeedsConfirmation, match=f"{task} step 1 late.jsonl"):
        service.push(a, url)
    assert f"refs/checkpoints/{task}/transcripts/1" not in remote_refs(remote)
    service.push(a, url, confirm=True)
    assert f"refs/checkpoints/{task}/transcripts/1" in remote_refs(remote)
    (a / "three.txt").write_text("3\n")
    service.save(a, "three")  # nothing new in the transcript: no transcript, no question
    assert not service.push(a, url).tasks[0].first
