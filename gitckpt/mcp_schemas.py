"""The MCP tools' typed shapes: plan items in, and the output schemas agents see."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from typing_extensions import TypedDict


class PlanEntry(BaseModel):
    """One checklist item; items are matched by their text."""

    item: str = Field(description="The item's text.")
    status: Literal["pending", "in_progress", "done", "blocked"] = "pending"
    add: bool = Field(False, description="A new item (else the text must match one).")


class _Out(TypedDict, total=False):
    __pydantic_config__ = ConfigDict(extra="allow")  # type: ignore[misc]


class SaveOut(_Out):
    """A saved step (or `idempotent: true` when nothing changed since the previous one)."""

    task: str
    step: int
    commit: str
    idempotent: bool
    changes: dict[str, list[str]]


class ResumeOut(_Out, total=False):
    """Where the task stands: `text` is the handoff; the other fields are the same facts.
    `found` is false (and nothing else but `text` is set) when no task is active here.
    `unsaved`: paths no commit holds yet; `since_step`: everything since the newest step,
    drifts included; `drifts`: the drifts recorded since that step."""

    found: bool
    task: str
    step: int
    next: str
    text: str
    unsaved: dict[str, list[str]] | None
    since_step: dict[str, list[str]] | None
    drifts: list[dict[str, Any]]
    problems: list[str]


class TimelineOut(_Out):
    """A task's steps and drifts, or (all_tasks) every task with its status."""


class DiffOut(_Out):
    """Changed paths with line counts, and the unified patch when asked."""

    files: list[dict[str, Any]]
    patch: str | None


class RestoreOut(_Out):
    """The restore plan; with apply, what was done and the safety copy that undoes it."""

    applied: bool
    workspace: str
    needs_confirm: bool
    create: list[str]
    modify: list[str]
    delete: list[str]
    safety: str | None


class DriftOut(_Out):
    """A capture: `recorded` is false when nothing changed since the tip."""

    recorded: bool
    commit: str


class TaskOut(_Out):
    """A task and its status."""


class PackageOut(_Out):
    """A handoff package written or imported."""

    task: str


class CompressOut(_Out):
    """Drift chains eligible, kept and dropped, and the bytes freed or freeable."""
