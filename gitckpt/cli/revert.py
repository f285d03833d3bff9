"""The CLI's `revert`: undo what a step or drift changed, keeping everything since."""

from __future__ import annotations

import click

from gitckpt.cli.base import Ctx, PathsAfterDashes, pass_ctx, paths_after, service
from gitckpt.cli.complete import complete_target, complete_task
from gitckpt.cli.render_revert import render_revert


@click.command(cls=PathsAfterDashes)
@click.argument("target", shell_complete=complete_target)
@click.argument("paths", nargs=-1, metavar="[--] [PATH]...")
@click.option("--apply", "do_apply", is_flag=True,
              help="Do it (default: only show the plan). Prints the safety copy's id.")
@click.option("--patch", is_flag=True,
              help="Show the unified diff of every file to change, conflicts between git's "
                   "markers.")
@click.option("--conflicts", type=click.Choice(["markers", "ours", "theirs"]), default=None,
              help="Settle conflicting files: write git-style markers into them, leave them "
                   "as they are (ours), or take the version from before the change (theirs).")
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Count step numbers in this task.")
@click.option("--expect", default=None, metavar="PLAN",
              help="The plan id of the preview you approved: if the plan is now another, "
                   "nothing is written and the new one shown.")
@click.option("--yes", "confirm", is_flag=True,
              help="Confirm an apply that deletes or rewrites many files.")
@pass_ctx
def revert(c: Ctx, target: str, paths: tuple[str, ...], do_apply: bool, patch: bool,
           conflicts: str | None, task: str | None, expect: str | None, confirm: bool) -> None:
    """Undo what TARGET changed and keep every change made since: TARGET is a step number, a
    drift's commit id, or A..B for several in a row. Preview, or --apply.

    Each file is merged three ways, as `git revert` does. The preview changes nothing and
    lists each file as clean, conflict, already (the workspace lacks the change already) or
    unrestorable. --apply takes a safety copy first; restoring its id undoes the revert.
    """
    paths = paths_after(paths)
    result = service.revert(c.root, target, apply=do_apply, paths=paths, task=task,
                            patch=patch, expect=expect, conflicts=conflicts, cwd=c.root,
                            confirm=confirm)
    again = ["gitckpt", *(["-C", c.root] if c.root != "." else []), "revert", target,
             *(["--task", task] if task else []),
             *([f"--conflicts={conflicts}"] if conflicts else [])]
    c.emit(result, lambda r: render_revert(r, again, paths), None if do_apply else "plan")
