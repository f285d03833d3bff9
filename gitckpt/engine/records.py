"""What a timeline hands out: step records, task listings, save and drift results, and the
commit messages humans read in `git log`."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any

from gitckpt.core.ids import ObjectId, TaskId
from gitckpt.core.shape import Shaped
from gitckpt.core.values import Changes, GitState, Skipped
from gitckpt.engine.notes import Note, PlanItem
from gitckpt.safety.redact import clean


def rfc3339(t: float) -> str:
    """`t` (seconds since the epoch) as UTC to the second, `2026-12-03T08:49:06Z`: what
    `datetime.isoformat` gives, without the import (`datetime` costs each hook 2 ms). As
    `datetime.fromtimestamp` does, the fraction is first rounded to microseconds (half to
    even): 26.9999995 s is 27 s."""
    fraction, whole = math.modf(t)
    u = time.gmtime(whole + round(fraction * 1e6) // 1_000_000)
    return (f"{u.tm_year:04d}-{u.tm_mon:02d}-{u.tm_mday:02d}T{u.tm_hour:02d}:{u.tm_min:02d}:"
            f"{u.tm_sec:02d}Z")


def parse_time(text: str | None) -> float | None:
    """Seconds since the epoch of an ISO 8601 time (`Z` or an offset; none means UTC), or
    None if `text` is not one."""
    from datetime import UTC, datetime

    try:
        t = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return (t if t.tzinfo else t.replace(tzinfo=UTC)).timestamp()


@dataclass(frozen=True)
class StepRecord:
    """One commit of a timeline (a step or a drift): its commit, tree, note and parents."""

    commit: ObjectId
    tree: ObjectId
    note: Note
    parents: tuple[ObjectId, ...] = ()

    @property
    def n(self) -> int:
        return self.note.step

    def to_dict(self) -> dict[str, Any]:
        n = self.note
        return {"step": n.step, "commit": self.commit, "kind": n.kind, "title": n.title,
                "conclusion": n.conclusion, "next": n.next, "created_at": n.created_at,
                "verified": n.verified, "open_questions": n.open_questions,
                "decisions": n.decisions, "closed": n.closed, "changes": n.changes,
                "trigger": n.trigger, "partial": n.partial, "target": n.target,
                "safety": n.safety}

    @property
    def changed(self) -> Changes:
        """What this commit changed against the one before it (its note's `changes`)."""
        c = self.note.changes
        return Changes(tuple(c.get("added", ())), tuple(c.get("modified", ())),
                       tuple(c.get("deleted", ())))

    @property
    def left_out(self) -> tuple[Skipped, ...]:
        """The files this commit's snapshot left out (its note's `skipped`)."""
        return tuple(Skipped(s["path"], s["reason"], s.get("size"), s.get("mtime"))
                     for s in self.note.skipped)

    @property
    def git_then(self) -> GitState | None:
        """Where the user's repository stood when this commit was made (git stores)."""
        g = self.note.git
        return GitState(g.get("head"), g.get("branch")) if g else None

    @property
    def label(self) -> str:
        """How humans name this commit: `step 2`, `drift 1a2b3c4`, `restore 1a2b3c4`."""
        n = self.note
        if n.kind in ("init", "step"):
            return f"step {n.step}"
        kind = "safety copy" if n.trigger == "pre_restore" else n.kind
        return f"{kind} {self.commit[:7]}"


@dataclass(frozen=True)
class TaskInfo:
    """A task as listed: metadata from its step-0 note, state from its head."""

    id: TaskId
    meta: Note
    head: StepRecord
    status: str  # active | suspended | closed
    last_activity: str = ""  # the newest step's or drift's time

    @property
    def summary(self) -> TaskSummary:
        return TaskSummary(self.id, self.meta.name, self.meta.goal, self.status, self.head.n,
                           self.head.commit, self.last_activity or self.head.note.created_at,
                           self.meta.workspace)

    def to_dict(self) -> dict[str, Any]:
        return self.summary.to_dict()


@dataclass(frozen=True)
class TaskSummary(Shaped):
    """A task as it answers: `steps` is its newest step's number, `head` its tip."""

    task: TaskId
    name: str | None
    goal: str | None
    status: str
    steps: int
    head: ObjectId
    last_activity: str
    workspace: str | None


@dataclass(frozen=True)
class SaveResult(Shaped):

    task: TaskId
    step: int
    commit: ObjectId
    tree: ObjectId
    idempotent: bool
    closed: bool
    changes: Changes
    skipped: tuple[Skipped, ...]
    redacted: int
    plan: list[PlanItem] = field(default_factory=list)
    #: the left-out files the step before did not leave out (the first step's: all of them):
    #: what a save says of them, once per file
    newly_skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Run:
    """A command `gitckpt run` kept for the next save, bound to the tree it ran on."""

    command: str
    exit_code: int
    tree: str
    note: str = ""
    duration_s: float | None = None

    def entry(self) -> dict[str, Any]:
        """The run as a step note's `commands` holds it."""
        out: dict[str, Any] = {"command": self.command, "exit_code": self.exit_code,
                               "note": self.note}
        if self.duration_s is not None:
            out["duration_s"] = self.duration_s
        out["tree"] = self.tree
        return out

    @classmethod
    def read(cls, data: object) -> Run | None:
        """The run a state file's entry holds, or None if it is not one (a damaged file)."""
        if not isinstance(data, dict) or not isinstance(data.get("command"), str) \
                or not isinstance(data.get("exit_code"), int) \
                or not isinstance(data.get("tree"), str):
            return None
        note, duration = data.get("note"), data.get("duration_s")
        return cls(data["command"], data["exit_code"], data["tree"],
                   note if isinstance(note, str) else "",
                   float(duration) if isinstance(duration, int | float)
                   and not isinstance(duration, bool) else None)


def line(text: str) -> str:
    """One line of a commit message: free text cannot forge a `Task:` line."""
    return clean(text, one_line=True)


def step_message(task: TaskId, note: Note) -> str:
    lines = [f"step {note.step}: {line(note.title)}", ""]
    body = [f"Conclusion: {line(note.conclusion)}" if note.conclusion else "",
            f"Next: {line(note.next)}" if note.next else ""]
    body += [f"Verified: {line(v)}" for v in note.verified]
    body = [b for b in body if b]
    if body:
        lines += [*body, ""]
    if note.closed:
        lines += ["Closed: the task is finished.", ""]
    lines.append(f"Task: {task}")
    return "\n".join(lines) + "\n"



@dataclass(frozen=True)
class DriftResult(Shaped):
    """A capture: `recorded` is False when nothing changed since the tip."""

    task: TaskId
    recorded: bool
    commit: ObjectId
    tree: ObjectId
    after_step: int
    trigger: str
    partial: bool
    changes: Changes
    skipped: tuple[Skipped, ...]


def drift_message(task: TaskId, note: Note, changes: Changes, shown: int = 3) -> str:
    paths = changes.paths()
    names = ", ".join(line(p) for p in paths[:shown]) + (", ..." if len(paths) > shown else "")
    count = f"{len(paths)} file{'' if len(paths) == 1 else 's'}"
    what = f"{count} ({names})" if paths else "no changes"
    if note.trigger == "pre_restore":
        what = f"safety copy before a restore, {what}"
    by = ""
    if note.tool:  # the host's tool call that made the change; the message is redacted
        command = note.tool.get("command")
        by = f"\nTool: {line(note.tool.get('name', '?'))}" + (f": {line(command)}" if command
                                                             else "")
    return (f"drift: {what}\n\nAfter step {note.step}; trigger: {note.trigger}"
            f"{' (partial)' if note.partial else ''}{by}\n\nTask: {task}\n")


def restore_message(task: TaskId, label: str, safety: ObjectId, changes: Changes) -> str:
    return (f"restore: {line(label)} (safety copy {safety[:7]})\n\n"
            f"{len(changes.paths())} files changed; restore {safety[:7]} to undo.\n\n"
            f"Task: {task}\n")


def revert_message(task: TaskId, label: str, safety: ObjectId, changes: Changes) -> str:
    return (f"revert: {line(label)} (safety copy {safety[:7]})\n\n"
            f"{len(changes.paths())} files changed; restore {safety[:7]} to undo.\n\n"
            f"Task: {task}\n")
