"""Checkpoints across machines through ordinary git remotes (issue 17, in progress): a bare
repository over file:// and a real `git daemon` on 127.0.0.1, started by the fixture."""

from __future__ import annotations

import socket
import subprocess
import time
from pathlib import Path

import pytest
from conftest import RepoGuard, git, make_repo

from gitckpt import service
from gitckpt.errors import Diverged, NeedsConfirmation

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


def test_push_fetch_continue_and_back(machines, tmp_path):
    remote, a, b = machines
    url = remote.as_uri()
    guard_a, guard_b = RepoGuard(a), RepoGuard(b)
    task = service.init(a, "travelling task", goal="across machines").save.task
    (a / "step1.txt").write_text("one\n")
    service.save(a, "step one", conclusion="the first")
    with pytest.raises(NeedsConfirmation) as asked:
        service.push(a, url)
    assert url.removeprefix("file://") in asked.value.message or str(remote) in \
        asked.value.message
    assert service.push(a, url, confirm=True).first
    guard_a.check(status_changes=True)
    listed = service.fetch(b, url)
    assert [t.task for t in listed.tasks] == [task] and listed.tasks[0].steps == 2
    got = service.fetch(b, url, task=task)
    assert got.moved and got.notes_added == 2
    guard_b.check(status_changes=True)
    assert "the first" in service.resume(b, task=task).text
    service.switch(b, task)
    service.restore(b, "1", apply=True)
    assert (b / "step1.txt").read_text() == "one\n"
    (b / "step2.txt").write_text("two\n")
    service.save(b, "step two on B", conclusion="continued")
    service.save(b, "step three on B")
    service.push(b, url, confirm=True)
    back = service.fetch(a, url, task=task)
    assert back.moved
    assert service.open_timeline(a).head(task).n == 3
    assert "continued" in service.resume(a).text
    # a fresh clone of the remote reads the steps' meaning with plain git
    fresh = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", "--bare", str(remote), str(fresh))
    git(fresh, "fetch", "-q", str(remote), "+refs/checkpoints/*:refs/checkpoints/*",
        "+refs/notes/*:refs/notes/*")
    shown = git(fresh, "log", f"--notes=gitckpt/{task}", "--format=%s%n%N",
                f"refs/checkpoints/{task}/head")
    assert "step two on B" in shown and '"conclusion": "continued"' in shown
    # only checkpoints travelled: the remote's branches are what A pushed by hand
    refs = git(remote, "for-each-ref", "--format=%(refname)").split()
    assert {r for r in refs if not r.startswith(("refs/checkpoints/", "refs/notes/gitckpt/"))
            } == {"refs/heads/main"}


def test_a_later_push_does_not_ask_again(machines):
    remote, a, _ = machines
    url = remote.as_uri()
    service.init(a, "asks once")
    assert service.push(a, url, confirm=True).first
    service.save(a, "more")
    assert not service.push(a, url).first  # no confirmation needed this time


def test_divergent_lines_are_refused_both_ways(machines):
    remote, a, b = machines
    url = remote.as_uri()
    task = service.init(a, "two lines").save.task
    service.push(a, url, confirm=True)
    service.fetch(b, url, task=task)
    service.switch(b, task)
    service.save(b, "B's step")
    service.push(b, url, confirm=True)
    service.save(a, "A's step")
    before = git(remote, "for-each-ref")
    with pytest.raises(Diverged) as refused:
        service.push(a, url)
    assert "--as" in refused.value.hint and git(remote, "for-each-ref") == before
    head_a = service.open_timeline(a).head(task).commit
    with pytest.raises(Diverged):
        service.fetch(a, url, task=task)
    assert service.open_timeline(a).head(task).commit == head_a  # nothing moved
    assert not git(a, "for-each-ref", "refs/gitckpt-incoming/")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def daemon(tmp_path):
    base = tmp_path / "served"
    base.mkdir()
    git(tmp_path, "init", "-q", "--bare", str(base / "remote.git"))
    port = free_port()
    proc = subprocess.Popen(["git", "daemon", "--reuseaddr", "--listen=127.0.0.1",
                             f"--port={port}", f"--base-path={base}", "--export-all",
                             "--enable=receive-pack", str(base)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"git://127.0.0.1:{port}/remote.git"
    for _ in range(100):
        if subprocess.run(["git", "ls-remote", url], capture_output=True).returncode == 0:
            break
        time.sleep(0.1)
    yield url
    proc.terminate()
    proc.wait(10)


def test_through_a_git_daemon(daemon, tmp_path):
    a = make_repo(tmp_path / "a")
    b = make_repo(tmp_path / "b")
    task = service.init(a, "over the wire").save.task
    service.save(a, "one")
    service.push(a, daemon, confirm=True)
    assert [t.task for t in service.fetch(b, daemon).tasks] == [task]
    assert service.fetch(b, daemon, task=task).moved
    assert service.open_timeline(b).head(task).n == 1


def test_a_thousand_tasks_list_in_one_call(machines):
    remote, a, _ = machines
    commit = git(remote, "rev-parse", "refs/heads/main").strip()
    lines = [f"create refs/checkpoints/t{i:04d}/{ref} {commit}"
             for i in range(1000) for ref in ["head", *(f"steps/{n}" for n in range(50))]]
    subprocess.run(["git", f"--git-dir={remote}", "update-ref", "--stdin"],
                   input="\n".join(lines) + "\n", text=True, check=True)
    started = time.monotonic()
    listed = service.fetch(a, remote.as_uri())
    took = time.monotonic() - started
    assert len(listed.tasks) == 1000 and all(t.steps == 50 for t in listed.tasks)
    assert took < 2, took


def test_credentials_in_a_url_are_never_shown(machines):
    from gitckpt.remote import shown

    assert shown("https://user:s3cret@example.com/x.git failed") == \
        "https://***@example.com/x.git failed"
    _, a, _ = machines
    service.init(a, "secret url")
    with pytest.raises(Exception) as failed:
        service.push(a, "https://user:s3cret@127.0.0.1:9/none.git", confirm=True)
    assert "s3cret" not in str(failed.value) and "s3cret" not in getattr(
        failed.value, "hint", "")
    assert isinstance(failed.value, Path) is False


def test_the_same_over_mcp(machines, monkeypatch):
    import anyio
    from mcp import Client

    from gitckpt.mcp_server import build_server

    monkeypatch.setenv("GITCKPT_WATCH", "off")
    remote, a, b = machines
    url = remote.as_uri()
    task = service.init(a, "agent pushes").save.task

    def calls(root, *steps):
        async def main():
            async with Client(build_server(str(root)), mode="legacy") as client:
                return [await client.call_tool(name, args) for name, args in steps]
        return anyio.run(main)

    asked, pushed = calls(a, ("ckpt_push", {"remote": url}),
                          ("ckpt_push", {"remote": url, "confirm": True}))
    assert asked.is_error and "confirm=true" in asked.content[0].text
    assert "--yes" not in asked.content[0].text
    assert not pushed.is_error and pushed.structured_content["first"]
    listed, fetched = calls(b, ("ckpt_fetch", {"remote": url}),
                            ("ckpt_fetch", {"remote": url, "task": task}))
    assert task in listed.content[0].text and listed.structured_content["tasks"][0]["steps"] == 1
    assert fetched.structured_content["moved"] and "ckpt_resume" in fetched.content[0].text
