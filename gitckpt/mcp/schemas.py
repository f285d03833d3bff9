"""The MCP tools' typed shapes: plan items in, and the output schemas agents see."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict


class NewPlanEntry(BaseModel):
    item: str
    status: Literal["pending", "in_progress", "done", "blocked"] = "pending"

    def as_item(self):
        """The plan item the service takes."""
        from gitckpt.engine.notes import PlanItem

        return PlanItem(self.item, self.status or "pending")


class PlanEntry(NewPlanEntry):
    item: str = Field(description="Its text.")
    add: bool = Field(False, description="New (else the text must match).")


class CommandIn(BaseModel):
    command: str
    exit_code: int
    note: str | None = None
    duration_s: float | None = None


class FileIn(BaseModel):
    path: str
    note: str = ""


class _Out(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]


# Every field each result can carry (the CLI's --json object), so an agent can rely on the
# declared shape; nested objects are declared as objects and lists, the texts explain them.
Str = str | None


class SaveOut(_Out, total=False):
    """A saved step (`idempotent`: nothing changed since the previous one)."""

    task: str
    step: int
    commit: str
    tree: str
    idempotent: bool
    closed: bool
    changes: dict
    skipped: list
    redacted: int
    plan: list


class InitOut(SaveOut, total=False):
    """Step 0 of a new task; `suspended` is the task it replaced as the active one."""

    name: str
    goal: str
    store: str
    active: bool
    suspended: Str


class ResumeOut(_Out, total=False):
    """Where the task stands; `text`: the handoff (alone, `found` false, if no task is
    active). `unsaved`: paths no commit holds; `since_step`: changes since the last step."""

    found: bool
    task: str
    name: str
    goal: Str
    constraints: Str
    status: str
    step: int
    title: str
    conclusion: str
    next: str
    then: list
    open_questions: list
    decisions: list
    gotchas: list
    checks: list
    files: list
    memory: dict
    plan: list
    recent: list
    drifts: list
    unsaved: dict | None
    since_step: dict | None
    git: dict | None
    watch: str
    problems: list
    text: str


class TimelineOut(_Out, total=False):
    """A page of a task's steps (oldest first) and their drifts; `more` older steps are not
    shown. With all_tasks: `tasks` and the `active` one."""

    task: str
    name: str
    status: str
    newest_step: int
    more: int
    steps: list
    drifts: list
    active: Str
    tasks: list


class DiffOut(_Out, total=False):
    """Changed paths with line counts, and the unified patch when asked."""

    base: dict
    target: dict
    files: list
    additions: int
    deletions: int
    patch: Str


class RestoreOut(_Out, total=False):
    """The plan (`plan_id` names it for expect); with apply, what was done and `safety`,
    the copy whose restore undoes it."""

    target: dict
    plan_id: str
    live_tree: str
    paths: list
    counts: dict
    create: list
    modify: list
    delete: list
    mode: list
    unrestorable: list
    kept: list
    workspace: str
    needs_confirm: bool
    applied: bool
    safety: Str
    commit: Str
    blocked: list
    patch: Str


class RevertOut(RestoreOut, total=False):
    """A revert's plan: clean files by action, `conflicts`, `already` (lacking the change)."""

    last: dict
    label: str
    conflicts: list
    already: list
    choice: Str


class DriftOut(_Out, total=False):
    """A capture: `recorded` is false when nothing changed since the tip."""

    task: str
    recorded: bool
    commit: Str
    tree: str
    after_step: int
    trigger: str
    partial: bool
    changes: dict
    skipped: list


class TaskOut(_Out, total=False):
    """The task now active and its status."""

    task: str
    name: str
    goal: Str
    status: str
    steps: int
    head: str
    last_activity: str
    workspace: Str


class ExportOut(_Out, total=False):
    """The package written."""

    task: str
    path: str
    steps: int
    objects: int
    bytes: int


class PushOut(_Out, total=False):
    """Each task pushed; `first`: its first push there."""

    remote: str
    tasks: list


class FetchOut(_Out, total=False):
    """The remote's `tasks`, or the `task` fetched."""

    remote: str
    tasks: list
    task: Str
    source: Str
    created: bool
    moved: bool
    steps: int
    drifts_kept: int


class ImportOut(_Out, total=False):
    """The task imported; `active`: it is the active task now."""

    task: str
    source_task: str
    steps: int
    objects: int
    new_objects: int
    active: bool
    dry_run: bool
    name: str


class CompressOut(_Out, total=False):
    """Drift chains eligible, kept and dropped, and the bytes freed or freeable."""

    keep_seconds: float
    min_steps: int
    dry_run: bool
    eligible: list
    kept: list
    dropped: list
    bytes_freed: int
    bytes_freeable: int
    why_nothing: Str
