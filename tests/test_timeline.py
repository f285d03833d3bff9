"""Tasks, steps, notes and refs through the service API, on a real repository."""

from __future__ import annotations

import json

import pytest

from conftest import git
from gitckpt import service
from gitckpt.errors import (InvalidArgument, NoActiveTask, SchemaTooNew, TaskClosed,
                            TaskNotFound)
from gitckpt.notes import SCHEMA
from gitckpt.store import open_store


class Clock:
    """An injected clock: each call is one second later."""

    def __init__(self, start: float = 1_790_000_000) -> None:
        self.t = start

    def __call__(self) -> float:
        self.t += 1
        return self.t


def refs(repo) -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/checkpoints",
              "refs/notes")
    return dict(line.split() for line in out.splitlines())


def note(repo, rev) -> dict:
    return json.loads(git(repo, "notes", "--ref=checkpoints", "show", rev))


def test_init_creates_step_zero_and_makes_it_active(repo, guard):
    result = service.init(repo, "Refactor auth", goal="move sessions to JWT",
                          constraints="no new deps", exclude=["*.tmp"],
                          plan=["Extract signing", "Logout endpoint=in_progress"])
    task = result.save.task
    assert task.startswith("refactor-auth-")
    r = refs(repo)
    assert r[f"refs/checkpoints/{task}/head"] == r[f"refs/checkpoints/{task}/steps/0"]
    assert "refs/notes/checkpoints" in r
    n = note(repo, f"refs/checkpoints/{task}/head")
    assert n["schema"] == SCHEMA and n["kind"] == "init" and n["step"] == 0
    assert (n["name"], n["goal"], n["constraints"], n["exclude"]) == (
        "Refactor auth", "move sessions to JWT", "no new deps", ["*.tmp"])
    assert n["plan"] == [{"item": "Extract signing", "status": "pending"},
                         {"item": "Logout endpoint", "status": "in_progress"}]
    assert n["git"]["branch"] == "main"
    assert git(repo, "log", "-1", "--format=%an <%ae>%n%B", f"refs/checkpoints/{task}/head") == (
        f"gitckpt <gitckpt@localhost>\ninit: Refactor auth\n\nGoal: move sessions to JWT\n\n"
        f"Task: {task}\n\n")
    assert service.tasks(repo).active == task
    guard.check()


def test_second_init_suspends_the_first(repo):
    a = service.init(repo, "first").save.task
    b = service.init(repo, "second").save.task
    status = {t.id: t.status for t in service.tasks(repo).tasks}
    assert status == {a: "suspended", b: "active"}


def test_save_records_a_step_commit_note_and_refs(repo, guard):
    task = service.init(repo, "Refactor auth", clock=Clock()).save.task
    (repo / "src" / "token.py").write_text("def sign(): ...\n")
    guard.reset()
    r = service.save(repo, "Extract token signing", conclusion="signing centralised",
                     next="switch the views", verified=["pytest: 12 passed"],
                     open_questions=["refresh tokens too?"], decisions=["keep HS256"],
                     description="moved code", clock=Clock())
    assert (r.step, r.idempotent, r.closed) == (1, False, False)
    assert r.changes.added == ("src/token.py",)
    head = f"refs/checkpoints/{task}/head"
    assert refs(repo)[head] == r.commit == refs(repo)[f"refs/checkpoints/{task}/steps/1"]
    assert git(repo, "log", "-1", "--format=%B", head) == (
        "step 1: Extract token signing\n\nConclusion: signing centralised\n"
        "Next: switch the views\nVerified: pytest: 12 passed\n\nTask: " + task + "\n\n")
    assert git(repo, "rev-parse", f"{head}^").strip() == refs(repo)[
        f"refs/checkpoints/{task}/steps/0"]
    n = note(repo, head)
    assert n["kind"] == "step" and n["step"] == 1
    assert n["open_questions"] == ["refresh tokens too?"] and n["decisions"] == ["keep HS256"]
    assert n["changes"]["added"] == ["src/token.py"]
    assert n["created_at"] == "2026-09-21T14:13:21Z"
    # The step's tree is the whole in-scope workspace, uncommitted work included.
    files = git(repo, "ls-tree", "-r", "--name-only", head).split()
    assert files == [".gitignore", "README.md", "notes.txt", "src/app.py", "src/staged.py",
                     "src/token.py"]
    assert git(repo, "show", f"{head}:src/app.py") == "print('v2')\n"
    guard.check()


def test_idempotent_save_writes_nothing(repo):
    service.init(repo, "t")
    first = service.save(repo, "A", conclusion="c", next="n", verified=["v"])
    before = refs(repo)
    again = service.save(repo, "A", conclusion="c", next="n", verified=["v"])
    assert again.idempotent and again.step == first.step and again.commit == first.commit
    assert refs(repo) == before
    # A different title is a new step; returning to "A" is new again (only the previous counts).
    assert service.save(repo, "B").step == 2
    assert not service.save(repo, "A", conclusion="c", next="n", verified=["v"]).idempotent
    # Same texts with a changed file is a new step too.
    (repo / "notes.txt").write_text("changed\n")
    assert service.save(repo, "A", conclusion="c", next="n", verified=["v"]).step == 4


def test_close_ends_the_task(repo):
    task = service.init(repo, "t").save.task
    r = service.save(repo, "last", close=True)
    assert r.closed and r.step == 1
    assert note(repo, f"refs/checkpoints/{task}/head")["closed"] is True
    with pytest.raises(TaskClosed) as e:
        service.save(repo, "more")
    assert "read-only" in e.value.message and e.value.hint
    assert service.tasks(repo).tasks[0].status == "closed"
    assert service.resume(repo).info.status == "closed"


def test_save_into_another_task_keeps_the_active_one(repo):
    a = service.init(repo, "agent a").save.task
    b = service.init(repo, "agent b").save.task
    r = service.save(repo, "work for a", task=a)
    assert r.task == a and r.step == 1
    assert service.tasks(repo).active == b
    assert service.save(repo, "work for b").task == b


def test_plan_updates_merge_by_text(repo):
    service.init(repo, "t", plan=["Login", "Logout"])
    r = service.save(repo, "s1", plan=["Logout=in_progress", "Refresh tokens"])
    assert [(p.item, p.status) for p in r.plan] == [
        ("Login", "pending"), ("Logout", "in_progress"), ("Refresh tokens", "pending")]
    r = service.save(repo, "s2", plan=["Login=done", "Logout=blocked"])
    assert [p.status for p in r.plan] == ["done", "blocked", "pending"]
    text = service.resume(repo).text
    assert "[x] Login" in text and "[!] Logout" in text and "[ ] Refresh tokens" in text
    with pytest.raises(InvalidArgument):
        service.save(repo, "s3", plan=["Login=finished"])


def test_free_text_is_redacted_and_counted(repo):
    r = service.init(repo, "deploy", goal="use API_TOKEN=abc123secret for staging")
    assert r.save.redacted == 1
    s = service.save(repo, "push", conclusion="curl -H 'Authorization: Bearer tok.en.value'",
                     verified=["ran with --password hunter2"])
    assert s.redacted == 2
    log = git(repo, "log", "--notes=checkpoints", f"refs/checkpoints/{r.save.task}/head")
    for secret in ("abc123secret", "tok.en.value", "hunter2"):
        assert secret not in log
    assert "«redacted»" in log


def test_errors_for_missing_tasks(repo, tmp_path):
    with pytest.raises(NoActiveTask):
        service.save(repo, "too early")
    with pytest.raises(NoActiveTask):
        service.resume(repo)
    service.init(repo, "t")
    with pytest.raises(TaskNotFound):
        service.save(repo, "x", task="no-such-task")
    with pytest.raises(InvalidArgument):
        service.log(repo, task="Not A Task!")
    with pytest.raises(InvalidArgument):
        service.save(repo, "   ")


def test_a_newer_note_schema_is_refused(repo):
    task = service.init(repo, "t").save.task
    store = open_store(repo)
    head = store.get_ref(f"refs/checkpoints/{task}/head")
    with store.lock():
        store.write_note(head, json.dumps({"schema": SCHEMA + 1, "kind": "init"}))
    with pytest.raises(SchemaTooNew) as e:
        service.resume(repo)
    assert "Upgrade gitckpt" in e.value.hint


@pytest.mark.user_git
def test_resume_reports_unsaved_paths_and_git_moves(repo):
    service.init(repo, "t", goal="g")
    service.save(repo, "s1", conclusion="c1", next="do the next thing",
                 open_questions=["why?"])
    (repo / "notes.txt").unlink()
    (repo / "src" / "app.py").write_text("print('v3')\n")
    (repo / "new.py").write_text("n\n")
    git(repo, "checkout", "-q", "feature")
    r = service.resume(repo)
    assert r.unsaved.to_dict() == {"added": ["new.py"], "modified": ["src/app.py"],
                                   "deleted": ["notes.txt"]}
    assert "Next: do the next thing" in r.text and "why?" in r.text
    assert "Git: feature at" in r.text and "(step 1 saw main at" in r.text
    d = r.to_dict()
    assert d["step"] == 1 and d["next"] == "do the next thing" and d["goal"] == "g"


def test_resume_is_about_one_screen(repo):
    service.init(repo, "long task", goal="a goal " * 20)
    for i in range(30):
        (repo / f"f{i}.txt").write_text(str(i))
        service.save(repo, f"step title number {i} " + "x" * 60,
                     conclusion="a long conclusion " * 30, next="next " * 40)
    text = service.resume(repo).text
    assert len(text) < 2500, len(text)
    assert "step title number 29" in text and "older steps" in text


def test_chinese_task_name(repo):
    r = service.init(repo, "重构认证模块", goal="迁移到 JWT")
    assert r.save.task.startswith("task-")
    assert git(repo, "check-ref-format", f"refs/checkpoints/{r.save.task}/head",
               check=False) == ""
    assert "重构认证模块" in service.resume(repo).text


def test_a_killed_save_between_head_and_step_ref_is_repaired(repo):
    task = service.init(repo, "t").save.task
    service.save(repo, "s1")
    git(repo, "update-ref", "-d", f"refs/checkpoints/{task}/steps/1")  # as if killed there
    assert any("missing" in p for p in service.resume(repo).problems)
    assert service.save(repo, "s2").step == 2
    assert f"refs/checkpoints/{task}/steps/1" in refs(repo)
    assert service.resume(repo).problems == []


def test_a_retried_save_with_new_details_is_not_dropped(repo):
    service.init(repo, "t")
    service.save(repo, "A", conclusion="c")
    assert service.save(repo, "A", conclusion="c").idempotent
    r = service.save(repo, "A", conclusion="c", open_questions=["new question"])
    assert not r.idempotent and r.step == 2
    r = service.save(repo, "A", conclusion="c", open_questions=["new question"],
                     plan=["Docs=done"])
    assert not r.idempotent and r.step == 3


def test_resume_of_a_task_from_another_workspace_of_the_repo(repo):
    pkg = repo / "pkg"
    pkg.mkdir()
    task = service.init(pkg, "package task").save.task
    r = service.resume(repo, task=task)
    assert r.unsaved is None and "belongs to workspace 'pkg'" in r.problems[0]
    from gitckpt.errors import TaskElsewhere
    with pytest.raises(TaskElsewhere):
        service.save(repo, "wrong place", task=task)
