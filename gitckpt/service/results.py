"""What the service API returns: one result type per operation. Each is `Shaped`: its fields
and derived properties are its `to_dict()` (the CLI's `--json` object and the MCP tools'
structured content) and the output schema the MCP server publishes (core/shape.py)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gitckpt.core.ids import ObjectId
from gitckpt.core.shape import HIDDEN, MERGED, Shaped, merged_of
from gitckpt.core.values import Changes, GitSince, Left
from gitckpt.engine.memory import Check, FileNote, Memory
from gitckpt.engine.notes import PlanItem
from gitckpt.engine.records import SaveResult, StepRecord, TaskInfo

if TYPE_CHECKING:  # annotations only: a resume loads none of them
    from gitckpt.engine import explain as explaining
    from gitckpt.engine.patch import FileDiff
    from gitckpt.engine.restore_plan import Plan
    from gitckpt.engine.revert import RevertPlan


@dataclass(frozen=True)
class InitResult(Shaped):

    save: SaveResult = field(metadata=MERGED)
    name: str
    goal: str
    store: str
    suspended: str | None = None  # the task that was active before, now suspended
    location: str = ""  # where the store is (a plain folder's was made by this init)
    derived = ("active",)

    @property
    def active(self) -> bool:
        return True  # a new task is the active one


@dataclass(frozen=True)
class Pending(Shaped):
    """What a task has not saved as a step, after a capture of the workspace."""

    task: str
    step: int
    title: str
    changed: int  # files that differ from the newest step
    tip: ObjectId  # the commit that holds the workspace now (the drift, or the step)
    recorded: bool  # the capture recorded a drift


class _OfTask:
    """What a result about one task answers of it (the task's id, name and status)."""

    info: TaskInfo  # (a field of each dataclass using this)

    @property
    def task(self) -> str:
        return self.info.id

    @property
    def name(self) -> str | None:
        return self.info.meta.name

    @property
    def status(self) -> str:
        return self.info.status


@dataclass(frozen=True)
class ResumeResult(_OfTask, Shaped):

    info: TaskInfo = field(metadata=HIDDEN)
    steps: list[StepRecord] = field(metadata=HIDDEN)
    drifts: list[StepRecord]  # after the newest step, oldest first
    unsaved: Changes | None  # since the tip (not captured by any commit yet)
    since_step: Changes | None  # since the newest step (drifts and unsaved together)
    git: GitSince | None
    watch: str
    problems: list[str]
    text: str
    memory: Memory
    checks: list[Check]
    files: list[FileNote]
    derived = ("found", "task", "name", "goal", "constraints", "status", "step", "title",
               "conclusion", "next", "then", "open_questions", "decisions", "gotchas", "plan",
               "recent")

    @property
    def found(self) -> bool:
        return True  # a task is active (else the answer is an error, or the MCP's not-found)

    @property
    def goal(self) -> str | None:
        return self.info.meta.goal

    @property
    def constraints(self) -> str | None:
        return self.info.meta.constraints

    @property
    def step(self) -> int:
        return self.info.head.n

    @property
    def title(self) -> str:
        return self.info.head.note.title

    @property
    def conclusion(self) -> str:
        return self.info.head.note.conclusion

    @property
    def next(self) -> str:
        return self.info.head.note.next

    @property
    def then(self) -> list[str]:
        return self.info.head.note.then

    @property
    def open_questions(self) -> list[str]:
        return [e.text for e in self.memory.questions]

    @property
    def decisions(self) -> list[str]:
        return [e.text for e in self.memory.decisions]

    @property
    def gotchas(self) -> list[str]:
        return [e.text for e in self.memory.gotchas]

    @property
    def plan(self) -> list[PlanItem]:
        return self.info.head.note.plan

    @property
    def recent(self) -> list[StepRecord]:
        """The newest five steps, newest first."""
        return self.steps[::-1][:5]


@dataclass(frozen=True)
class LogResult(_OfTask, Shaped):
    """A page of a task's timeline: `steps` (oldest first) and the drifts after each; `more`
    older steps are not shown (`before=steps[0].n` pages on)."""

    info: TaskInfo = field(metadata=HIDDEN)
    steps: list[StepRecord]
    # step n -> its drifts, oldest first
    after: dict[int, list[StepRecord]] = field(metadata=HIDDEN)
    more: int = 0
    # one step asked for by number: the text shows it all
    full: bool = field(default=False, metadata=HIDDEN)
    derived = ("task", "name", "status", "newest_step", "drifts")

    @property
    def newest_step(self) -> int:
        return self.info.head.n

    @property
    def drifts(self) -> list[StepRecord]:
        """The page's drifts, oldest first."""
        return [d for s in self.steps for d in self.after.get(s.n, [])]

    def timeline(self) -> list[StepRecord]:
        """Steps and drifts in order, oldest first."""
        out: list[StepRecord] = []
        for s in self.steps:
            out += [s, *self.after.get(s.n, [])]
        return out


@dataclass(frozen=True)
class TasksResult(Shaped):

    tasks: list[TaskInfo]
    active: str | None


@dataclass(frozen=True)
class RestoreResult(Shaped):
    """A restore's preview (`applied` False) or what its apply did; `safety` is the copy
    whose restore undoes it. The plan's keys are the answer's."""

    plan: Plan = field(metadata=merged_of("gitckpt.engine.restore_plan:Plan"))
    applied: bool
    workspace: str = ""
    safety: ObjectId | None = None
    commit: ObjectId | None = None
    blocked: tuple[Left, ...] = ()
    patch: str | None = None
    needs_confirm: bool = False  # a preview whose apply must be confirmed (its reach)


@dataclass(frozen=True)
class RevertResult(RestoreResult):
    """A revert's preview or apply: a restore's, of a revert's plan."""

    plan: RevertPlan = field(  # type: ignore[assignment]  # a narrower plan
        metadata=merged_of("gitckpt.engine.revert:RevertPlan"))


@dataclass(frozen=True)
class DiffResult(Shaped):

    base: dict[str, Any]
    target: dict[str, Any]
    files: list[FileDiff]
    patch: str | None
    derived = ("additions", "deletions")

    @property
    def additions(self) -> int:
        return sum(f.additions or 0 for f in self.files)

    @property
    def deletions(self) -> int:
        return sum(f.deletions or 0 for f in self.files)


@dataclass(frozen=True)
class RunResult(Shaped):
    """A command run by `gitckpt run`, kept for the next save with the tree it ran on."""

    task: str
    command: str
    exit_code: int
    duration_s: float
    tree: str
    drift: str | None  # the drift recorded before the run, if files had changed
    failure: str | None = None  # why the command could not start (exit code 127)


@dataclass(frozen=True)
class Watchable:
    """A workspace with an active task, as a long-running front end needs it: `key` names
    its store's workspace (one watcher each), `log` opens a log file in its state folder."""

    key: Path
    state: Path
    log: Callable[[str], Any]


@dataclass(frozen=True)
class ScopeResult(Shaped):
    workspace: str
    paths: list[explaining.Decision]


@dataclass(frozen=True)
class AdoptResult(Shaped):
    workspace: str
    store: str
    earlier: list[str]


@dataclass(frozen=True)
class RemoteSetting(Shaped):
    """The remote push and fetch use when given none (None: not set), shown without
    credentials; `holds_credentials` if the saved one has some (an earlier gitckpt kept it)."""

    remote: str | None
    holds_credentials: bool = False


@dataclass(frozen=True)
class TranscriptSetting(Shaped):
    """Whether steps keep their sessions' transcript segments, and how many steps of the
    store's tasks hold some (`bytes`: their size, as stored)."""

    on: bool
    steps: int
    bytes: int

