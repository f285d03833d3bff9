"""The CLI's commands of what changed and putting it back: diff, restore, revert."""

from __future__ import annotations

from gitckpt.cli.declared import command
from gitckpt.cli.invocation import Ctx
from gitckpt.cli.render import render_diff, render_restore
from gitckpt.cli.render_revert import render_revert
from gitckpt.core import operations as ops


@command(ops.DiffRequest)
def diff(c: Ctx, r: ops.DiffRequest) -> None:
    c.emit(c.perform(r), render_diff, "patch" if r.patch else None)


def _again(c: Ctx, verb: str, target: str, task: str | None, *extra: str) -> list[str]:
    """The command line that repeats a preview (its apply line, its undo line)."""
    return ["gitckpt", *(["-C", c.root] if c.root != "." else []), verb, target,
            *(["--task", task] if task else []), *extra]


@command(ops.RestoreRequest)
def restore(c: Ctx, r: ops.RestoreRequest) -> None:
    again = _again(c, "restore", r.target, r.task)
    c.emit(c.perform(r), lambda result: render_restore(result, again, r.paths),
           None if r.apply else "plan")


@command(ops.RevertRequest)
def revert(c: Ctx, r: ops.RevertRequest) -> None:
    again = _again(c, "revert", r.target, r.task,
                   *([f"--conflicts={r.conflicts}"] if r.conflicts else []))
    c.emit(c.perform(r), lambda result: render_revert(result, again, r.paths),
           None if r.apply else "plan")


COMMANDS = (diff, restore, revert)
