"""Typed errors: each carries a message for the user and a hint saying what to do next."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from gitckpt.core.hints import BLANK, CLI, Arg, Call, Suggestion, call, spell


class GitckptError(Exception):
    """An expected failure caused by input or state, not by a bug in gitckpt.

    Front ends show `message` and the hint and exit 1 (CLI) or return an error result (MCP).
    `code` is a stable machine-readable name for the kind of failure. The hint may name the
    operations to run next as `{0}`, `{1}`... filled by `suggest`, so each front end spells
    them in its own terms (`hint_in(voice)`); `hint` is the CLI's spelling.
    """

    code = "error"
    suggests: tuple[Suggestion, ...] = ()  # the kind's own, when a hint names {0} but no others

    def __init__(self, message: str, hint: str = "", suggest: Sequence[Suggestion] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.template = hint
        self.suggest = tuple(suggest) or (self.suggests if "{0}" in hint else ())

    @property
    def hint(self) -> str:
        return self.hint_in(CLI)

    def hint_in(self, voice: str) -> str:
        return spell(self.template, self.suggest, voice)

    def to_dict(self, voice: str = CLI) -> dict[str, Any]:
        return {"error": self.code, "message": self.message, "hint": self.hint_in(voice),
                "suggest": [s.to_dict() for s in self.suggest if isinstance(s, Call)]}


class InvalidArgument(GitckptError):
    code = "invalid_argument"


class WorkspaceError(GitckptError):
    """The workspace path cannot be used (missing, not a directory, inside .git, ...)."""

    code = "workspace"


class NotAGitWorkspace(WorkspaceError):
    code = "not_git"


class StoreElsewhere(WorkspaceError):
    """A store found for a folder was not made for it (another path, owner or workspace)."""

    code = "store_elsewhere"


class NoActiveTask(GitckptError):
    code = "no_active_task"

    def __init__(self) -> None:
        super().__init__(
            "No active task in this workspace.",
            "Start one with {0}, or pass {1} (see {2}).",
            [call("init", name=BLANK, goal=BLANK), Arg("task"), call("tasks")],
        )


class TaskNotFound(GitckptError):
    code = "task_not_found"

    def __init__(self, task: str) -> None:
        super().__init__(f"No task named {task!r} in this store.", "List the tasks with {0}.",
                         [call("tasks")])
        self.task = task


class TaskClosed(GitckptError):
    code = "task_closed"

    def __init__(self, task: str) -> None:
        super().__init__(
            f"Task {task} is closed; it is read-only.",
            "Start a new task with {0}; resume and log still work on this one.",
            [call("init", name=BLANK)],
        )
        self.task = task


class TaskElsewhere(GitckptError):
    code = "task_elsewhere"


class StoreBusy(GitckptError):
    code = "busy"

    def __init__(self, lock_path: str, timeout: float) -> None:
        super().__init__(
            f"The checkpoint store is busy: another gitckpt process held its lock for "
            f"{timeout:g}s.",
            f"Retry in a moment; if no gitckpt process is running, check {lock_path}.",
        )


class StoreNotWritable(GitckptError):
    code = "store_not_writable"


CHECK_STORE = "Check the store with {0} (or `git fsck` in a repository); nothing was changed."


class StoreCorrupt(GitckptError):
    code = "store_corrupt"
    suggests = (call("doctor"),)


class StoreUnsafe(StoreCorrupt):
    """Something inside the store (a symlink, a folder that is a file) that gitckpt will not
    write through."""

    code = "store_unsafe"


class SchemaTooNew(StoreCorrupt):
    code = "schema_too_new"

    def __init__(self, what: str, found: int, known: int) -> None:
        super().__init__(
            f"{what} uses format version {found}; this gitckpt understands up to {known}.",
            "Upgrade gitckpt (pip install -U gitckpt); nothing was read or changed.",
        )


class NeedsConfirmation(GitckptError):
    """An operation whose reach is larger than a user would expect; it runs only when
    confirmed (CLI `--yes`, MCP `confirm: true`)."""

    code = "needs_confirmation"


class Unsupported(GitckptError):
    """A dependency or platform gitckpt was not made for."""

    code = "unsupported"


class InternalError(Exception):
    """A broken invariant: a bug in gitckpt or its environment, never a user error (CLI exit 3)."""


class RefMoved(GitckptError):
    """A compare-and-swap ref update found the ref somewhere else than expected."""

    code = "ref_moved"

    def __init__(self, ref: str, expected: str | None, found: str | None) -> None:
        super().__init__(
            f"{ref} moved during the update (expected {expected or 'absent'}, found "
            f"{found or 'absent'})",
            "Another writer changed the timeline; retry the command.",
        )


class GitIndexChanged(GitckptError):
    """The user's `.git/index` changed while a snapshot ran (gitckpt never writes it)."""

    code = "git_index_changed"

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} changed while gitckpt was scanning; nothing was saved.",
            "Another git command ran at the same time; retry. gitckpt never writes that file.",
        )


class WorkspaceChanging(GitckptError):
    """Files kept changing while a snapshot read them, attempt after attempt."""

    code = "workspace_changing"

    def __init__(self, detail: str) -> None:
        detail = detail.strip() or "a read raced a writer"
        super().__init__(
            f"Files kept changing while gitckpt read them ({detail}); nothing was saved.",
            "Another program is rewriting files in the workspace; retry when it is done.",
        )


class RemoteFailed(GitckptError):
    """git could not reach or update a remote (its message, credentials taken out)."""

    code = "remote_failed"


class RemoteTimeout(RemoteFailed):
    """git was stopped: the remote did not answer, or stopped sending, within the time
    limit (the message names the remote and the setting that allows more time)."""

    code = "remote_timeout"


class FileTooLarge(GitckptError):
    """A task from elsewhere (a remote, a package) holds a file over the size limit
    (GITCKPT_MAX_FILE_SIZE), which a save here would have left out."""

    code = "too_large"

    def __init__(self, path: str, size: int, limit: int, message: str = "",
                 hint: str = "") -> None:
        super().__init__(message or f"{path} is {size:,} bytes, over the size limit of "
                         f"{limit:,} bytes (GITCKPT_MAX_FILE_SIZE).", hint)
        self.path, self.size, self.limit = path, size, limit


class Diverged(GitckptError):
    """Both sides saved steps after the same step: neither line may replace the other."""

    code = "diverged"
