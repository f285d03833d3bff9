"""The CLI commands that move checkpoints through git remotes (push, fetch) and gitckpt's own
settings (config remote, config transcripts)."""

from __future__ import annotations

import click

from gitckpt.cli.base import Ctx, pass_ctx, service
from gitckpt.cli.complete import complete_task
from gitckpt.cli.render_remote import (
    render_fetch,
    render_push,
    render_remote_setting,
    render_transcripts,
)


@click.command()
@click.argument("remote", required=False)
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Push this task (default: active).")
@click.option("--all", "all_tasks", is_flag=True, help="Push every task of this workspace.")
@click.option("--as", "as_id", default=None, metavar="NEW_ID",
              help="Push it as the remote's task NEW_ID (a line that diverged from the "
                   "remote's).")
@click.option("--yes", "confirm", is_flag=True,
              help="Confirm a task's first push to a remote (it publishes the task).")
@pass_ctx
def push(c: Ctx, remote: str | None, task: str | None, all_tasks: bool, as_id: str | None,
         confirm: bool) -> None:
    """Push a task's checkpoints and notes to REMOTE (a git remote's name or a URL; default:
    the one set with `gitckpt config remote`). Only refs/checkpoints/<task>/* and the task's
    notes travel, never branches or tags, and nothing is added to git's config."""
    if all_tasks and (task or as_id is not None):
        raise click.UsageError("--all pushes every task: it takes no --task or --as.")
    c.emit(service.push(c.root, remote, task=task, all_tasks=all_tasks, as_id=as_id,
                        confirm=confirm), render_push)


@click.command()
@click.argument("remote", required=False)
@click.option("--task", default=None, metavar="ID", help="Bring this task here.")
@click.option("--as", "as_id", default=None, metavar="NEW_ID",
              help="Bring it as a task of its own (a line that diverged from this one's).")
@pass_ctx
def fetch(c: Ctx, remote: str | None, task: str | None, as_id: str | None) -> None:
    """List the tasks REMOTE holds, or with --task bring one here: its head moves only
    forward, drifts from both sides are kept, and the workspace's files are not touched
    (`gitckpt restore head --apply` puts them here)."""
    if as_id is not None and not task:
        raise click.UsageError("--as needs --task.")
    c.emit(service.fetch(c.root, remote, task=task, as_id=as_id), render_fetch)


@click.group()
def config() -> None:
    """gitckpt's own settings for this workspace (kept in its state, never in git's config)."""


@config.command("remote")
@click.argument("name", required=False)
@click.option("--unset", is_flag=True, help="Forget the remote.")
@pass_ctx
def config_remote(c: Ctx, name: str | None, unset: bool) -> None:
    """Show, set (NAME: a git remote's name or a URL) or --unset the remote that push and
    fetch use when given none."""
    if unset and name:
        raise click.UsageError("NAME and --unset do not go together.")
    if name is None and not unset:
        c.emit(service.remote_setting(c.root), render_remote_setting)
        return
    c.emit(service.set_remote(c.root, name), render_remote_setting)


@config.command("transcripts")
@click.argument("state", required=False, type=click.Choice(["on", "off"]))
@pass_ctx
def config_transcripts(c: Ctx, state: str | None) -> None:
    """Show, or turn on or off, the keeping of each step's session transcripts. Off (the
    default), a step keeps its prompts, sessions, models and token usage, and no transcript.
    On, it also keeps what each session's transcript gained since the step before, redacted
    and at most 512 KiB a session, under refs/checkpoints/<task>/transcripts/<n> (not in the
    workspace's tree); a push lists new ones and asks before they leave; compress removes
    them."""
    c.emit(service.transcripts(c.root, None if state is None else state == "on"),
           render_transcripts)


COMMANDS = (push, fetch, config)
