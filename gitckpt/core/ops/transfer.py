"""The requests of moving a task elsewhere: push, fetch, export, import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gitckpt.core.ops.fields import task
from gitckpt.core.request import Opening, Request, arg

if TYPE_CHECKING:  # the results, named in the class bases' strings (which ruff does not
    # read as types) for the type checker only: the layers above own them
    from gitckpt.transfer.fetch import FetchResult  # noqa: F401
    from gitckpt.transfer.migrate import MigrateResult  # noqa: F401
    from gitckpt.transfer.package import ExportResult, ImportResult  # noqa: F401
    from gitckpt.transfer.push import PushResult  # noqa: F401


@dataclass(frozen=True)
class PushRequest(Request["PushResult"]):
    """Push a task's checkpoints and notes to REMOTE (a git remote's name or a URL; default:
    the one set with `gitckpt config remote`). Only refs/checkpoints/<task>/* and the task's
    notes travel, never branches or tags, and nothing is added to git's config."""

    op = "push"
    command = "push"
    tool = "ckpt_push"
    summary = "Push a task's checkpoints to a git remote."

    remote: str | None = arg(brief="Git remote or URL.", positional=True, default=None)
    task: str | None = task("Push this task (default: active).")
    all_tasks: bool = arg("Push every task of this workspace.", cli="--all", mcp=False,
                          default=False)
    as_id: str | None = arg("Push it as the remote's task NEW_ID (a line that diverged from "
                            "the remote's).", brief="Push as this id.", cli="--as",
                            metavar="NEW_ID", default=None)
    confirm: bool = arg("Confirm a task's first push to a remote (it publishes the task).",
                        brief="First push there.", cli="--yes", default=False)

    def usage(self) -> str | None:
        if self.all_tasks and (self.task or self.as_id is not None):
            return "{all_tasks} pushes every task: it takes no {task} or {as_id}."
        return None


@dataclass(frozen=True)
class FetchRequest(Request["FetchResult"]):
    """List the tasks REMOTE holds, or with --task bring one here: its head moves only
    forward, drifts from both sides are kept, and the workspace's files are not touched
    (`gitckpt restore head --apply` puts them here)."""

    op = "fetch"
    command = "fetch"
    tool = "ckpt_fetch"
    summary = "List a git remote's tasks, or fetch one."

    remote: str | None = arg(brief="Git remote or URL.", positional=True, default=None)
    task: str | None = arg("Bring this task here.", brief="", metavar="ID", default=None)
    as_id: str | None = arg("Bring it as a task of its own (a line that diverged from this "
                            "one's).", brief="As this new id.", cli="--as", metavar="NEW_ID",
                            default=None)

    def opened(self) -> Opening:
        return Opening.FIND if self.task is None else Opening.HERE  # like init: a task here

    def usage(self) -> str | None:
        return "{as_id} needs {task}." if self.as_id is not None and not self.task else None


@dataclass(frozen=True)
class ExportRequest(Request["ExportResult"]):
    """Write a handoff package of a task: HANDOFF.md, manifest.json, checkpoints.git/."""

    op = "export"
    command = "export"
    tool = "ckpt_export"
    summary = "Write a task as a package that ckpt_import continues elsewhere."

    to: str = arg("The package folder to create.", brief="A new folder.", metavar="DIR",
                  path="file")
    task: str | None = task("Export this task (default: active).")


@dataclass(frozen=True)
class ImportRequest(Request["ImportResult | MigrateResult"]):
    """Import a handoff package; its task becomes the active task here."""

    op = "import"
    command = "import"
    tool = "ckpt_import"
    summary = "Continue a packaged task here, checked before any write."
    opening = Opening.HERE  # like init: a task is made in this folder's own store

    package: str = arg(brief="The package folder.", positional=True, path="file")
    as_id: str | None = arg("Import under this task id (when the package's id is taken "
                            "here).", brief="Task id if taken.", cli="--as", metavar="ID",
                            default=None)
    dry_run: bool = arg("Only check the package and say what it holds.", mcp=False,
                        default=False)
    checkout: bool = arg("Then put the head's files into the workspace (a restore, with a "
                         "safety copy that undoes it).", mcp=False, default=False)
    confirm: bool = arg("With --checkout: confirm a restore that deletes or rewrites many "
                        "files.", cli="--yes", mcp=False, default=False)
    source: Literal["claude-checkpoint", "task-checkpoint"] | None = arg(
        "PACKAGE is a .claude-checkpoint file, or a task-checkpoint-mcp store (or its "
        "workspace), instead of a gitckpt package.", cli="--from", mcp=False, default=None)

    def opened(self) -> Opening:
        return Opening.FIND if self.dry_run else Opening.HERE

    def usage(self) -> str | None:
        if self.source is not None and (self.as_id or self.dry_run or self.checkout):
            return "{as_id}, {dry_run} and {checkout} are for gitckpt packages, not {source}."
        if self.dry_run and self.checkout:
            return "{dry_run} writes nothing: it cannot {checkout}."
        return None
