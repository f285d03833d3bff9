"""The CLI's `why`, `blame` and `explain`: where each line of a file comes from, grouped with
its story (tool call, prompt, step, verification) or one line each as `git blame` prints
them, and what a commit of the user's holds of the tasks' work."""

from __future__ import annotations

import click

from gitckpt.cli.base import Ctx, pass_ctx, service
from gitckpt.cli.complete import complete_task

_TASK = click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
                     help="Read this task's checkpoints (default: active).")


@click.command()
@click.argument("target", metavar="PATH[:LINE[-LINE]]")
@_TASK
@pass_ctx
def why(c: Ctx, target: str, task: str | None) -> None:
    """Why these lines are here: the step or drift that last changed each, the tool call and
    the prompt behind it, the step that saved it and the newest command run on a tree that
    holds it. Renames are followed; a restored or reverted line keeps its first origin."""
    c.emit(service.why(c.root, target, task=task, cwd="."), render_why, "log")


@click.command()
@click.argument("path")
@_TASK
@click.option("--all", "all_tasks", is_flag=True,
              help="Every task of this workspace that holds the file: each line's earliest "
                   "checkpoint in any of them, with its task.")
@pass_ctx
def blame(c: Ctx, path: str, task: str | None, all_tasks: bool) -> None:
    """`git blame` over the task's checkpoints: one line each, the checkpoint that wrote it."""
    if all_tasks and task:
        raise click.UsageError("--all reads every task: it takes no --task.")
    c.emit(service.why(c.root, path, task=task, cwd=".", lines=False, all_tasks=all_tasks),
           render_blame, "log")


@click.command()
@click.argument("commit", default="HEAD")
@pass_ctx
def explain(c: Ctx, commit: str) -> None:
    """What COMMIT (default HEAD) holds of the agents' work: for each file it changed, the
    task checkpoint where that exact content first appeared, the step that saved it, the
    prompt behind it and what was run on it. Found by content: no hook is needed."""
    c.emit(service.explain(c.root, commit), render_explain, "log")


COMMANDS = (why, blame, explain)


def render_explain(result) -> str:
    tasks = ", ".join(result.tasks) or "no task"
    lines = [f"commit {result.commit[:7]} {result.subject}", f"holds the work of: {tasks}"]
    for f in result.files:
        lines.append("")
        if f.task is None:
            lines.append(f"{f.path}: in no checkpoint (written outside the tasks)")
            continue
        lines.append(f"{f.path}: {f.checkpoint[:7]} {f.label} of {f.task}")
        if f.prompt:
            lines.append(f"  prompt: {f.prompt[:200]!r}")
        lines.append(f"  saved in step {f.saved_in}" + (f": {f.conclusion}" if f.conclusion
                                                          else "")
                     if f.saved_in is not None else "  not saved as a step yet")
        lines.append(f"  verified: {f.verified}")
    return "\n".join(lines) + "\n"


def _groups(result) -> list[list]:
    """Runs of consecutive lines that come from the same checkpoint."""
    out: list[list] = []
    for o in result.lines:
        if out and (out[-1][-1].commit, out[-1][-1].label) == (o.commit, o.label) \
                and out[-1][-1].line == o.line - 1:
            out[-1].append(o)
        else:
            out.append([o])
    return out


def _what(o) -> str:
    """The checkpoint and its trigger, in a few words."""
    head = f"{o.commit[:7]} {o.label}" if o.commit else o.label
    tool = o.tool or {}
    if o.trigger == "tool" and tool:
        command = tool.get("command")
        head += f" (tool {tool.get('name')}{f': `{command[:60]}`' if command else ''}"
        head += f", {tool['host']})" if tool.get("host") else ")"
    elif o.trigger and o.kind == "drift":
        head += f" ({o.trigger})"
    return head


def render_why(result) -> str:
    lines = [f"{result.path} in task {result.task}: {result.total_lines} lines, "
             f"{result.checkpoints} checkpoints read"]
    for group in _groups(result):
        o = group[0]
        span = f"{o.line}" if len(group) == 1 else f"{o.line}-{group[-1].line}"
        lines.append("")
        lines.append(f"{result.path}:{span}  {_what(o)}"
                     + (f", {o.created_at}" if o.created_at else ""))
        if o.path != result.path and o.path:
            lines.append(f"  (named {o.path} there)")
        if o.kind == "before_task":
            lines.append("  it predates the task" + (f": last changed in your commit "
                                                    f"{o.user_commit[:7]}" if o.user_commit
                                                    else " (not in the commit it began on)"))
        if o.prompt:
            lines.append(f"  prompt: {o.prompt[:200]!r}")
        if o.saved_in is not None and o.kind != "before_task":
            lines.append(f"  saved in step {o.saved_in}"
                         + (f": {o.conclusion}" if o.conclusion else ""))
        elif o.kind != "before_task":
            lines.append("  not saved as a step yet")
        lines.append(f"  verified: {o.verified}")
    return "\n".join(lines) + "\n"


def render_blame(result) -> str:
    width = len(str(result.total_lines))
    out = []
    tasks = max((len(o.task) for o in result.lines if o.task), default=0)
    for o in result.lines:
        who = (o.commit[:7] if o.commit else "0000000") + " " + o.label.ljust(22)[:22]
        if tasks:  # across tasks: whose checkpoint it is
            who += " " + (o.task or "").ljust(tasks)
        out.append(f"{who} {str(o.line).rjust(width)}) {o.text}")
    return "\n".join(out) + ("\n" if out else "")
