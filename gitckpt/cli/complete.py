"""Shell completion: `gitckpt completion bash|zsh|fish` prints click's script, and task ids
and step numbers are completed from the store of the folder the command line names (-C)."""

from __future__ import annotations

import click
from click.shell_completion import CompletionItem, get_completion_class

from gitckpt.cli.output import echo
from gitckpt.core import operations as ops

SHELLS = ("bash", "zsh", "fish")
VAR = "_GITCKPT_COMPLETE"


def _root(ctx: click.Context) -> str:
    return ctx.find_root().params.get("root") or "."


def complete_task(ctx: click.Context, param: click.Parameter, incomplete: str
                  ) -> list[CompletionItem]:
    """The store's task ids, each with its name. Nothing at all on any error: a completion
    never prints one."""
    from gitckpt.service.dispatch import call

    try:
        tasks = call(_root(ctx), ops.TasksRequest()).tasks
    except Exception:
        return []
    return [CompletionItem(t.id, help=t.meta.name or "") for t in tasks
            if t.id.startswith(incomplete)]


def complete_target(ctx: click.Context, param: click.Parameter, incomplete: str
                    ) -> list[CompletionItem]:
    """Step numbers of the task (--task, else the active one), newest first, with their
    titles; then head and tip (and live, for diff)."""
    from gitckpt.service.dispatch import call

    try:
        r = call(_root(ctx), ops.LogRequest(task=ctx.params.get("task"), steps_only=True))
    except Exception:
        return []
    items = [CompletionItem(str(s.n), help=s.note.title) for s in reversed(r.steps)]
    words = ["head", "tip"] + (["live"] if ctx.command.name == "diff" else [])
    items += [CompletionItem(w) for w in words]
    return [i for i in items if i.value.startswith(incomplete)]


@click.command()
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL; for example, in ~/.bashrc:
    eval "$(gitckpt completion bash)"."""
    cli = click.get_current_context().find_root().command  # the whole command tree
    complete = get_completion_class(shell)
    assert complete is not None  # a shell click.Choice took
    echo(complete(cli, {}, "gitckpt", VAR).source() + "\n")
