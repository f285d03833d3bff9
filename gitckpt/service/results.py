"""What the service API returns: one result type per operation, each with the `to_dict()` that
is both the CLI's `--json` object and the MCP tools' structured content."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitckpt.core.ids import ObjectId
from gitckpt.core.values import Changes
from gitckpt.engine.memory import Check, FileNote, Memory
from gitckpt.engine.records import SaveResult, StepRecord, TaskInfo

if TYPE_CHECKING:  # annotations only: a resume loads neither
    from gitckpt.engine import explain as explaining
    from gitckpt.engine.patch import FileDiff
    from gitckpt.engine.restore_plan import Plan


@dataclass(frozen=True)
class InitResult:
    save: SaveResult
    name: str
    goal: str
    store: str
    suspended: str | None = None  # the task that was active before, now suspended

    def to_dict(self) -> dict:
        d = self.save.to_dict()
        d.update(name=self.name, goal=self.goal, store=self.store, active=True,
                 suspended=self.suspended)
        return d


@dataclass(frozen=True)
class Pending:
    """What a task has not saved as a step, after a capture of the workspace."""

    task: str
    step: int
    title: str
    changed: int  # files that differ from the newest step
    tip: ObjectId  # the commit that holds the workspace now (the drift, or the step)
    recorded: bool  # the capture recorded a drift

    def to_dict(self) -> dict:
        return {"task": self.task, "step": self.step, "title": self.title,
                "changed": self.changed, "tip": self.tip, "recorded": self.recorded}


@dataclass(frozen=True)
class ResumeResult:
    info: TaskInfo
    steps: list[StepRecord]
    drifts: list[StepRecord]  # after the newest step, oldest first
    unsaved: Changes | None  # since the tip (not captured by any commit yet)
    since_step: Changes | None  # since the newest step (drifts and unsaved together)
    git: dict | None
    watch: str
    problems: list[str]
    text: str
    memory: Memory
    checks: list[Check]
    files: list[FileNote]

    def to_dict(self) -> dict:
        head = self.info.head.note
        m = self.memory
        return {
            "found": True,
            "task": self.info.id, "name": self.info.meta.name, "goal": self.info.meta.goal,
            "constraints": self.info.meta.constraints, "status": self.info.status,
            "step": self.info.head.n, "title": head.title, "conclusion": head.conclusion,
            "next": head.next, "then": head.then,
            "open_questions": [e.text for e in m.questions],
            "decisions": [e.text for e in m.decisions], "gotchas": [e.text for e in m.gotchas],
            "checks": [c.to_dict() for c in self.checks],
            "files": [f.to_dict() for f in self.files], "memory": m.to_dict(),
            "plan": [vars(p) for p in head.plan],
            "recent": [s.to_dict() for s in self.steps[::-1][:5]],
            "drifts": [d.to_dict() for d in self.drifts],
            "unsaved": self.unsaved.to_dict() if self.unsaved is not None else None,
            "since_step": self.since_step.to_dict() if self.since_step is not None else None,
            "git": self.git, "watch": self.watch, "problems": self.problems, "text": self.text,
        }


@dataclass(frozen=True)
class LogResult:
    """A page of a task's timeline: `steps` (oldest first) and the drifts after each; `more`
    older steps are not shown (`before=steps[0].n` pages on)."""

    info: TaskInfo
    steps: list[StepRecord]
    drifts: dict[int, list[StepRecord]]  # step n -> the drifts after it, oldest first
    more: int = 0
    full: bool = False  # one step asked for by number: the text shows all of it

    def timeline(self) -> list[StepRecord]:
        """Steps and drifts in order, oldest first."""
        out: list[StepRecord] = []
        for s in self.steps:
            out += [s, *self.drifts.get(s.n, [])]
        return out

    def to_dict(self) -> dict:
        return {"task": self.info.id, "name": self.info.meta.name, "status": self.info.status,
                "newest_step": self.info.head.n, "more": self.more,
                "steps": [s.to_dict() for s in self.steps],
                "drifts": [d.to_dict() for s in self.steps for d in self.drifts.get(s.n, [])]}


@dataclass(frozen=True)
class TasksResult:
    tasks: list[TaskInfo]
    active: str | None

    def to_dict(self) -> dict:
        return {"active": self.active, "tasks": [t.to_dict() for t in self.tasks]}


@dataclass(frozen=True)
class RestoreResult:
    """A restore preview (`applied` False) or what an apply did; `safety` undoes it."""

    plan: Plan
    applied: bool
    workspace: str = ""
    safety: ObjectId | None = None
    commit: ObjectId | None = None
    blocked: tuple[tuple[str, str], ...] = ()
    patch: str | None = None
    needs_confirm: bool = False  # a preview whose apply must be confirmed (its reach)

    def to_dict(self) -> dict:
        d = self.plan.to_dict()
        d.update(workspace=self.workspace, needs_confirm=self.needs_confirm,
                 applied=self.applied, safety=self.safety,
                 commit=self.commit, blocked=[{"path": p, "reason": r} for p, r in self.blocked],
                 patch=self.patch)
        return d


@dataclass(frozen=True)
class DiffResult:
    base: dict
    target: dict
    files: list[FileDiff]
    patch: str | None

    def to_dict(self) -> dict:
        return {"base": self.base, "target": self.target,
                "files": [f.to_dict() for f in self.files],
                "additions": sum(f.additions or 0 for f in self.files),
                "deletions": sum(f.deletions or 0 for f in self.files), "patch": self.patch}


@dataclass(frozen=True)
class RunResult:
    """A command run by `gitckpt run`, kept for the next save with the tree it ran on."""

    task: str
    command: str
    exit_code: int
    duration_s: float
    tree: str
    drift: str | None  # the drift recorded before the run, if files had changed
    failure: str | None = None  # why the command could not start (exit code 127)

    def to_dict(self) -> dict:
        return {"task": self.task, "command": self.command, "exit_code": self.exit_code,
                "duration_s": self.duration_s, "tree": self.tree, "drift": self.drift,
                "failure": self.failure}


@dataclass(frozen=True)
class Watchable:
    """A workspace with an active task, as a long-running front end needs it: `key` names
    its store's workspace (one watcher each), `log` opens a log file in its state folder."""

    key: Path
    state: Path
    log: Callable[[str], Any]


@dataclass(frozen=True)
class ScopeResult:
    workspace: str
    decisions: list[explaining.Decision]

    def to_dict(self) -> dict:
        return {"workspace": self.workspace, "paths": [d.to_dict() for d in self.decisions]}


@dataclass(frozen=True)
class AdoptResult:
    workspace: str
    store: str
    earlier: list[str]

    def to_dict(self) -> dict:
        return {"workspace": self.workspace, "store": self.store, "earlier": self.earlier}


@dataclass(frozen=True)
class RemoteSetting:
    """The remote push and fetch use when given none (None: not set), shown without
    credentials; `holds_credentials` if the saved one has some (an earlier gitckpt kept it)."""

    remote: str | None
    holds_credentials: bool = False

    def to_dict(self) -> dict:
        return {"remote": self.remote, "holds_credentials": self.holds_credentials}

