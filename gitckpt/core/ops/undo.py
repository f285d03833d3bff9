"""The requests of putting files back: restore, revert, and dropping old drifts (compress)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from gitckpt.core.ops.fields import task
from gitckpt.core.request import Request, arg

if TYPE_CHECKING:  # the results, named in the class bases' strings (which ruff does not
    # read as types) for the type checker only: the layers above own them
    from gitckpt.engine.compress import CompressResult  # noqa: F401
    from gitckpt.service import results  # noqa: F401


@dataclass(frozen=True)
class RestoreRequest(Request["results.RestoreResult"]):
    """Restore TARGET (a step number, head, tip, a commit id prefix, or a ref): preview, or
    --apply.

    The preview changes nothing. --apply first saves the workspace as a safety copy; restoring
    that copy's id undoes the restore. PATHs limit the restore to these files or folders.
    Left-out files (ignored, excluded, sensitive, too large) are never written or deleted."""

    op = "restore"
    command = "restore"
    tool = "ckpt_restore"
    summary = "Put files back as a step or drift had them; previews unless apply."

    target: str = arg(brief="Step number, head, or commit id.", positional=True,
                      complete="target")
    apply: bool = arg("Do it (default: only show the plan). Prints the safety copy's id.",
                      brief="", default=False)
    paths: tuple[str, ...] = arg(brief="", positional=True, metavar="[--] [PATH]...",
                                 path="workspace", after_dashes=True, default=())
    task: str | None = task("Restore within this task.")
    patch: bool = arg("Show the unified diff of every file to change.", mcp=False,
                      default=False)
    expect: str | None = arg(
        "The plan id of the preview you approved (the preview's apply line shows it): if the "
        "plan is now another, nothing is written and the new one shown.", brief="",
        metavar="PLAN", default=None)
    confirm: bool = arg("Confirm an apply that deletes or rewrites many files (more than 500, "
                        "or more than half of the workspace).", brief="", cli="--yes",
                        default=False)


@dataclass(frozen=True)
class RevertRequest(Request["results.RevertResult"]):
    """Undo what TARGET changed and keep every change made since: TARGET is a step number, a
    drift's commit id, or A..B for several in a row. Preview, or --apply.

    Each file is merged three ways, as `git revert` does. The preview changes nothing and
    lists each file as clean, conflict, already (the workspace lacks the change already) or
    unrestorable. --apply takes a safety copy first; restoring its id undoes the revert."""

    op = "revert"
    command = "revert"
    tool = "ckpt_revert"
    summary = "Undo one step's or drift's changes, keeping later work; previews unless apply."

    target: str = arg(brief="Step, drift id, or A..B.", positional=True, complete="target")
    apply: bool = arg("Do it (default: only show the plan). Prints the safety copy's id.",
                      brief="", default=False)
    paths: tuple[str, ...] = arg(brief="", positional=True, metavar="[--] [PATH]...",
                                 path="workspace", after_dashes=True, default=())
    conflicts: Literal["markers", "ours", "theirs"] | None = arg(
        "Settle conflicting files: write git-style markers into them, leave them as they are "
        "(ours), or take the version from before the change (theirs).",
        brief="", default=None)
    task: str | None = task("Count step numbers in this task.")
    patch: bool = arg("Show the unified diff of every file to change, conflicts between "
                      "git's markers.", mcp=False, default=False)
    expect: str | None = arg("The plan id of the preview you approved: if the plan is now "
                             "another, nothing is written and the new one shown.", brief="",
                             metavar="PLAN", default=None)
    confirm: bool = arg("Confirm an apply that deletes or rewrites many files.", brief="",
                        cli="--yes", default=False)


@dataclass(frozen=True)
class CompressRequest(Request["CompressResult"]):
    """Reclaim space from old drifts. Steps are never touched."""

    op = "compress"
    command = "compress"
    tool = "ckpt_compress"
    summary = "Drop old drifts (never steps or safety copies)."

    keep: str = arg("Keep drift chains newer than this (s, m, h, d, w).",
                    brief="Keep newer drifts (7d, 12h).", metavar="DURATION",
                    show_default=True, default="7d")
    dry_run: bool = arg("Show what would be dropped; change nothing.", brief="Only report.",
                        default=False)
    min_steps: int = arg("Always keep the drifts after the newest N steps of each task.",
                         brief="Keep those of the newest N steps.", cli="--min", minimum=0,
                         show_default=True, default=3)
