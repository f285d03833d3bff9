"""Tasks, steps, notes and refs through the service API, on both stores."""

from __future__ import annotations

import json
import subprocess

import pytest
from conftest import git, service

from gitckpt.core.decode import plan_update
from gitckpt.core.errors import (
    InvalidArgument,
    NoActiveTask,
    SchemaTooNew,
    TaskClosed,
    TaskNotFound,
)
from gitckpt.engine.notes import SCHEMA, PlanItem
from gitckpt.store.discover import open_store


class Clock:
    """An injected clock: each call is one second later."""

    def __init__(self, start: float = 1_790_000_000) -> None:
        self.t = start

    def __call__(self) -> float:
        self.t += 1
        return self.t


def refs(ws) -> dict[str, str]:
    out = ws.git("for-each-ref", "--format=%(refname) %(objectname)", "refs/checkpoints",
                 "refs/notes")
    return dict(line.split() for line in out.splitlines())


def note(ws, rev) -> dict:
    return json.loads(ws.git("notes", "--ref=checkpoints", "show", rev))


def test_init_creates_step_zero_and_makes_it_active(ws):
    result = service.init(ws.root, "Refactor auth", goal="move sessions to JWT",
                          constraints="no new deps", exclude=["*.tmp"],
                          plan=[PlanItem("Extract signing"),
                                PlanItem("Logout endpoint", "in_progress")])
    task = result.save.task
    assert task.startswith("refactor-auth-")
    r = refs(ws)
    assert r[f"refs/checkpoints/{task}/head"] == r[f"refs/checkpoints/{task}/steps/0"]
    assert "refs/notes/checkpoints" in r
    n = note(ws, f"refs/checkpoints/{task}/head")
    assert n["schema"] == SCHEMA
    assert n["kind"] == "init"
    assert n["step"] == 0
    assert (n["name"], n["goal"], n["constraints"], n["exclude"]) == (
        "Refactor auth", "move sessions to JWT", "no new deps", ["*.tmp"])
    assert n["plan"] == [{"item": "Extract signing", "status": "pending"},
                         {"item": "Logout endpoint", "status": "in_progress"}]
    assert (n.get("git") or {}).get("branch") == ("main" if ws.kind == "git" else None)
    assert ws.git("log", "-1", "--format=%an <%ae>%n%B", f"refs/checkpoints/{task}/head") == (
        f"gitckpt <gitckpt@localhost>\ninit: Refactor auth\n\nGoal: move sessions to JWT\n\n"
        f"Task: {task}\n\n")
    assert service.tasks(ws.root).active == task


def test_second_init_suspends_the_first(ws):
    a = service.init(ws.root, "first").save.task
    b = service.init(ws.root, "second").save.task
    status = {t.id: t.status for t in service.tasks(ws.root).tasks}
    assert status == {a: "suspended", b: "active"}


def test_save_records_a_step_commit_note_and_refs(ws):
    task = service.init(ws.root, "Refactor auth", clock=Clock()).save.task
    (ws.root / "src" / "token.py").write_text("def sign(): ...\n")
    r = service.save(ws.root, "Extract token signing", conclusion="signing centralised",
                     next="switch the views", verified=["pytest: 12 passed"],
                     open_questions=["refresh tokens too?"], decisions=["keep HS256"],
                     description="moved code", clock=Clock())
    assert (r.step, r.idempotent, r.closed) == (1, False, False)
    assert r.changes.added == ("src/token.py",)
    head = f"refs/checkpoints/{task}/head"
    assert refs(ws)[head] == r.commit == refs(ws)[f"refs/checkpoints/{task}/steps/1"]
    assert ws.git("log", "-1", "--format=%B", head) == (
        "step 1: Extract token signing\n\nConclusion: signing centralised\n"
        "Next: switch the views\nVerified: pytest: 12 passed\n\nTask: " + task + "\n\n")
    assert ws.git("rev-parse", f"{head}^").strip() == refs(ws)[
        f"refs/checkpoints/{task}/steps/0"]
    n = note(ws, head)
    assert n["kind"] == "step"
    assert n["step"] == 1
    assert n["open_questions"] == ["refresh tokens too?"]
    assert n["decisions"] == ["keep HS256"]
    assert n["changes"]["added"] == ["src/token.py"]
    assert n["created_at"] == "2026-09-21T14:13:21Z"
    # The step's tree is the whole in-scope workspace, uncommitted work included.
    files = ws.git("ls-tree", "-r", "--name-only", head).split()
    assert files == [".gitignore", "README.md", "notes.txt", "src/app.py", "src/staged.py",
                     "src/token.py"]
    assert ws.git("show", f"{head}:src/app.py") == "print('v2')\n"


def test_idempotent_save_writes_nothing(ws):
    service.init(ws.root, "t")
    first = service.save(ws.root, "A", conclusion="c", next="n", verified=["v"])
    before = refs(ws)
    again = service.save(ws.root, "A", conclusion="c", next="n", verified=["v"])
    assert again.idempotent
    assert again.step == first.step
    assert again.commit == first.commit
    assert refs(ws) == before
    # A different title is a new step; returning to "A" is new again (only the previous counts).
    assert service.save(ws.root, "B").step == 2
    assert not service.save(ws.root, "A", conclusion="c", next="n", verified=["v"]).idempotent
    # Same texts with a changed file is a new step too.
    (ws.root / "notes.txt").write_text("changed\n")
    assert service.save(ws.root, "A", conclusion="c", next="n", verified=["v"]).step == 4


def test_close_ends_the_task(ws):
    task = service.init(ws.root, "t").save.task
    r = service.save(ws.root, "last", close=True)
    assert r.closed
    assert r.step == 1
    assert note(ws, f"refs/checkpoints/{task}/head")["closed"] is True
    with pytest.raises(TaskClosed) as e:
        service.save(ws.root, "more")
    assert "read-only" in e.value.message
    assert e.value.hint
    assert service.tasks(ws.root).tasks[0].status == "closed"
    assert service.resume(ws.root).info.status == "closed"


def test_save_into_another_task_keeps_the_active_one(ws):
    a = service.init(ws.root, "agent a").save.task
    b = service.init(ws.root, "agent b").save.task
    r = service.save(ws.root, "work for a", task=a)
    assert r.task == a
    assert r.step == 1
    assert service.tasks(ws.root).active == b
    assert service.save(ws.root, "work for b").task == b


def test_plan_updates_merge_by_text(ws):
    service.init(ws.root, "t", plan=[PlanItem("Login"), PlanItem("Logout")])
    r = service.save(ws.root, "s1", plan=[PlanItem("Logout", "in_progress"),
                                         PlanItem("Refresh tokens")])
    assert [(p.item, p.status) for p in r.plan] == [
        ("Login", "pending"), ("Logout", "in_progress"), ("Refresh tokens", "pending")]
    r = service.save(ws.root, "s2", plan=[PlanItem("Login", "done"), PlanItem("Logout", "blocked")])
    assert [p.status for p in r.plan] == ["done", "blocked", "pending"]
    text = service.resume(ws.root).text
    assert "[x] Login" in text
    assert "[!] Logout" in text
    assert "[ ] Refresh tokens" in text
    with pytest.raises(InvalidArgument):
        service.save(ws.root, "s3", plan=[plan_update("Login=finished")])


def test_free_text_is_redacted_and_counted(ws):
    r = service.init(ws.root, "deploy", goal="use API_TOKEN=abc123secret for staging")
    assert r.save.redacted == 1
    s = service.save(ws.root, "push", conclusion="curl -H 'Authorization: Bearer tok.en.value'",
                     verified=["ran with --password hunter2"])
    assert s.redacted == 2
    log = ws.git("log", "--notes=checkpoints", f"refs/checkpoints/{r.save.task}/head")
    for secret in ("abc123secret", "tok.en.value", "hunter2"):
        assert secret not in log
    assert "«redacted»" in log


def test_errors_for_missing_tasks(ws):
    with pytest.raises(NoActiveTask):
        service.save(ws.root, "too early")
    with pytest.raises(NoActiveTask):
        service.resume(ws.root)
    service.init(ws.root, "t")
    with pytest.raises(TaskNotFound):
        service.save(ws.root, "x", task="no-such-task")
    with pytest.raises(InvalidArgument):
        service.log(ws.root, task="Not A Task!")
    with pytest.raises(InvalidArgument):
        service.save(ws.root, "   ")


def test_a_newer_note_schema_is_refused(ws):
    task = service.init(ws.root, "t").save.task
    store = open_store(ws.root)
    head = store.get_ref(f"refs/checkpoints/{task}/head")
    with store.lock():
        store.write_note(head, json.dumps({"schema": SCHEMA + 1, "kind": "init"}))
    with pytest.raises(SchemaTooNew) as e:
        service.resume(ws.root)
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
    assert "Next: do the next thing" in r.text
    assert "why?" in r.text
    assert "Git: feature at" in r.text
    assert "the branch changed since step 1 (main at" in r.text
    assert r.git.branch == "feature"
    assert r.git.at_step.branch == "main"
    d = r.to_dict()
    assert d["step"] == 1
    assert d["next"] == "do the next thing"
    assert d["goal"] == "g"


def test_resume_is_about_one_screen(ws):
    service.init(ws.root, "long task", goal="a goal " * 20)
    for i in range(30):
        (ws.root / f"f{i}.txt").write_text(str(i))
        service.save(ws.root, f"step title number {i} " + "x" * 60,
                     conclusion="a long conclusion " * 30, next="next " * 40)
    text = service.resume(ws.root).text
    assert len(text) < 2500, len(text)
    assert "step title number 29" in text
    assert "older steps" in text


def test_chinese_task_name(ws):
    r = service.init(ws.root, "重构认证模块", goal="迁移到 JWT")
    assert r.save.task.startswith("task-")
    assert subprocess.run(["git", "check-ref-format", f"refs/checkpoints/{r.save.task}/head"]
                          ).returncode == 0
    assert "重构认证模块" in service.resume(ws.root).text


def test_a_killed_save_between_head_and_step_ref_is_repaired(ws):
    task = service.init(ws.root, "t").save.task
    service.save(ws.root, "s1")
    ws.git("update-ref", "-d", f"refs/checkpoints/{task}/steps/1")  # as if killed there
    assert any("missing" in p for p in service.resume(ws.root).problems)
    assert service.save(ws.root, "s2").step == 2
    assert f"refs/checkpoints/{task}/steps/1" in refs(ws)
    assert service.resume(ws.root).problems == []


def test_a_retried_save_with_new_details_is_not_dropped(ws):
    service.init(ws.root, "t")
    service.save(ws.root, "A", conclusion="c")
    assert service.save(ws.root, "A", conclusion="c").idempotent
    r = service.save(ws.root, "A", conclusion="c", open_questions=["new question"])
    assert not r.idempotent
    assert r.step == 2
    r = service.save(ws.root, "A", conclusion="c", open_questions=["new question"],
                     plan=[PlanItem("Docs", "done")])
    assert not r.idempotent
    assert r.step == 3


def test_resume_of_a_task_from_another_workspace_of_the_repo(repo):
    pkg = repo / "pkg"
    pkg.mkdir()
    task = service.init(pkg, "package task").save.task
    from gitckpt.core.errors import TaskElsewhere
    with pytest.raises(TaskElsewhere, match=f"belongs to the workspace {pkg}, not to {repo}"):
        service.resume(repo, task=task)  # read from its own folder only
    assert service.resume(pkg, task=task).info.id == task
    with pytest.raises(TaskElsewhere):
        service.save(repo, "wrong place", task=task)
