"""The one API both front ends call: each function opens the workspace, acts, returns a result.

Results are plain dataclasses with `to_dict()`; the CLI's `--json` output and the MCP tools'
structured content are that dict. Nothing here prints.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from gitckpt.errors import GitckptError
from gitckpt.handoff import handoff_text
from gitckpt.notes import PlanItem
from gitckpt.store import open_store
from gitckpt.store.base import Changes
from gitckpt.timeline import Clock, SaveResult, StepRecord, TaskInfo, Timeline, step_ref


def open_timeline(root: str | Path, clock: Clock = time.time, store: str | None = None
                  ) -> Timeline:
    return Timeline(open_store(root, store=store), clock)


@dataclass(frozen=True)
class InitResult:
    save: SaveResult
    name: str
    goal: str
    store: str

    def to_dict(self) -> dict:
        d = self.save.to_dict()
        d.update(name=self.name, goal=self.goal, store=self.store, active=True)
        return d


def init(root: str | Path, name: str, *, goal: str = "", constraints: str = "",
         exclude: list[str] | None = None, plan: list[str] | None = None,
         store: str | None = None, clock: Clock = time.time) -> InitResult:
    """Start a task: snapshot 0, make it active (the previous active task is suspended).

    `store` puts a plain folder's checkpoints in that folder (with a pointer file here)."""
    tl = open_timeline(root, clock, store)
    items = [PlanItem.parse(p) for p in plan or []]
    task, result = tl.init(name, goal, constraints, exclude, items)
    meta = tl.meta(task)
    return InitResult(result, meta.name or name, meta.goal or "", tl.store.kind)


def save(root: str | Path, title: str, *, conclusion: str = "", next: str = "",
         description: str = "", verified: list[str] | None = None,
         open_questions: list[str] | None = None, decisions: list[str] | None = None,
         plan: list[str] | None = None, close: bool = False, task: str | None = None,
         clock: Clock = time.time) -> SaveResult:
    """Save a finished step of the active task (or `task`, without changing the active one)."""
    tl = open_timeline(root, clock)
    items = [PlanItem.parse(p) for p in plan or []]
    return tl.save(title, conclusion=conclusion, next=next, description=description,
                   verified=verified, open_questions=open_questions, decisions=decisions,
                   plan=items, close=close, task=task)


@dataclass(frozen=True)
class ResumeResult:
    info: TaskInfo
    steps: list[StepRecord]
    unsaved: Changes | None
    git: dict | None
    problems: list[str]
    text: str

    def to_dict(self) -> dict:
        head = self.info.head.note
        return {
            "task": self.info.id, "name": self.info.meta.name, "goal": self.info.meta.goal,
            "constraints": self.info.meta.constraints, "status": self.info.status,
            "step": self.info.head.n, "title": head.title, "conclusion": head.conclusion,
            "next": head.next, "open_questions": head.open_questions,
            "decisions": head.decisions, "plan": [vars(p) for p in head.plan],
            "recent": [s.to_dict() for s in self.steps[::-1][:5]],
            "unsaved": self.unsaved.to_dict() if self.unsaved is not None else None,
            "git": {"now": self.git, "at_step": head.git},
            "problems": self.problems, "text": self.text,
        }


def resume(root: str | Path, *, task: str | None = None) -> ResumeResult:
    """The handoff for a new session. Read-only: no lock, no commit, no cache write."""
    tl = open_timeline(root)
    tid = tl.resolve(task)
    info = tl.info(tid)
    steps = tl.steps(tid)
    problems: list[str] = []
    unsaved: Changes | None = None
    if info.meta.workspace not in (None, tl.store.workspace):
        problems.append(f"This task belongs to workspace {info.meta.workspace or '(root)'!r}; "
                        "unsaved changes are shown from there only.")
    else:
        try:
            live = tl.live(info.meta)
            unsaved = tl.store.diff_trees(info.head.tree, live.tree)
        except GitckptError as e:
            problems.append(f"Cannot scan the workspace: {e.message}")
    missing = [s.n for s in steps if tl.store.get_ref(step_ref(tid, s.n)) is None]
    if missing:
        problems.append(f"refs steps/{missing[0]}.. are missing (a save was interrupted); the "
                        "next save re-creates them.")
    state = tl.store.git_state()
    git_now = state.to_dict() if state else None
    text = handoff_text(info, steps, unsaved, git_now, problems)
    return ResumeResult(info, steps, unsaved, git_now, problems, text)


@dataclass(frozen=True)
class LogResult:
    info: TaskInfo
    steps: list[StepRecord]

    def to_dict(self) -> dict:
        return {"task": self.info.id, "name": self.info.meta.name, "status": self.info.status,
                "steps": [s.to_dict() for s in self.steps]}


def log(root: str | Path, *, task: str | None = None) -> LogResult:
    """The timeline of the active task (or `task`), oldest step first."""
    tl = open_timeline(root)
    tid = tl.resolve(task)
    return LogResult(tl.info(tid), tl.steps(tid))


@dataclass(frozen=True)
class TasksResult:
    tasks: list[TaskInfo]
    active: str | None

    def to_dict(self) -> dict:
        return {"active": self.active, "tasks": [t.to_dict() for t in self.tasks]}


def tasks(root: str | Path) -> TasksResult:
    """Every task in the workspace's store."""
    tl = open_timeline(root)
    return TasksResult(tl.tasks(), tl.active_id())
