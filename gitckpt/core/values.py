"""The values every layer passes around: a left-out file, a snapshot, the changes between two
trees, where the user's repository stood, and the name of a workspace's store folder.
Nothing here reads or writes anything."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, NamedTuple

from gitckpt.core.ids import ObjectId
from gitckpt.core.shape import HIDDEN, Shaped

#: Why a snapshot left an existing file out.
Reason = Literal["sensitive", "too_large", "excluded", "unreadable", "nested_repo",
                 "invalid_name", "too_deep", "changing"]

#: Told each workspace path a scan reads (a progress report).
Progress = Callable[[str], None]

POINTER = ".gitckpt"  # a workspace's store folder, or the file naming it
DESCRIPTION = "gitckpt checkpoints\n"  # marks a plain-folder store (a .git has its own)


@dataclass(frozen=True)
class Skipped(Shaped):
    """An existing file a snapshot left out; its content was never read."""

    path: str
    reason: Reason
    size: int | None = None
    mtime: float | None = None


class Left(NamedTuple):
    """A path an operation left as it was, and why (a restore's `kept`, `blocked`)."""

    path: str
    reason: str


@dataclass(frozen=True)
class Snapshot:
    """The tree of the whole in-scope workspace at one moment, plus what was left out."""

    tree: ObjectId
    skipped: tuple[Skipped, ...] = ()


@dataclass(frozen=True)
class Changes(Shaped):
    """Workspace-relative paths that differ between two trees."""

    added: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.modified or self.deleted)

    def paths(self) -> list[str]:
        return sorted({*self.added, *self.modified, *self.deleted})


@dataclass(frozen=True)
class GitState(Shaped):
    """Where the user's repository stood (git stores only)."""

    head: str | None
    branch: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, metadata=HIDDEN)


@dataclass(frozen=True)
class GitSince(Shaped):
    """How the user's repository moved since a step: where HEAD is now, `commits_since`
    (commits on HEAD that the step's HEAD lacks), `head_reachable` (the step's HEAD is still
    in HEAD's history: False after a rebase or reset; None: not known) and `at_step`, where
    it stood then."""

    head: str | None
    branch: str | None
    commits_since: int | None = None
    head_reachable: bool | None = None
    at_step: GitState | None = None


@dataclass(frozen=True)
class RestoreMarker(Shaped):
    """A restore in progress, left in the state folder before the first file changes and
    removed after the last: if it outlives its apply, the files may be half-restored, and
    restoring `safety` undoes what was done (restoring `target` finishes it)."""

    task: str | None
    target: str
    label: str
    safety: str
    revert: str | None = None  # a revert's target spec: rerunning it finishes the revert
    #: its file in the store's state folder
    FILE: ClassVar[str] = "restore.json"

    @classmethod
    def from_dict(cls, data: object) -> RestoreMarker | None:
        """The marker in `data` (read from a file: anything), or None if it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("safety"), str):
            return None
        task = data.get("task")
        revert = data.get("revert")
        return cls(task if isinstance(task, str) else None, str(data.get("target") or ""),
                   str(data.get("label") or "an earlier state"), data["safety"],
                   revert if isinstance(revert, str) else None)

