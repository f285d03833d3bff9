"""The CLI's `why`, `blame` and `explain`: where each line of a file comes from, grouped with
its story (tool call, prompt, step, verification) or one line each as `git blame` prints
them, and what a commit of the user's holds of the tasks' work."""

from __future__ import annotations

from typing import TYPE_CHECKING

from gitckpt.cli.declared import command
from gitckpt.cli.invocation import Ctx
from gitckpt.core import operations as ops

if TYPE_CHECKING:
    from gitckpt.engine.contains import ExplainResult
    from gitckpt.engine.why import LineOrigin, WhyResult


@command(ops.WhyRequest)
def why(c: Ctx, r: ops.WhyRequest) -> None:
    c.emit(c.perform(r), render_why, "log")


@command(ops.BlameRequest)
def blame(c: Ctx, r: ops.BlameRequest) -> None:
    c.emit(c.perform(r), render_blame, "log")


@command(ops.ExplainRequest)
def explain(c: Ctx, r: ops.ExplainRequest) -> None:
    c.emit(c.perform(r), render_explain, "log")


COMMANDS = (why, blame, explain)


def render_explain(result: ExplainResult) -> str:
    tasks = ", ".join(result.tasks) or "no task"
    lines = [f"commit {result.commit[:7]} {result.subject}", f"holds the work of: {tasks}"]
    for f in result.files:
        lines.append("")
        if f.task is None:
            lines.append(f"{f.path}: in no checkpoint (written outside the tasks)")
            continue
        assert f.checkpoint is not None  # a file of a task's has that task's checkpoint
        lines.append(f"{f.path}: {f.checkpoint[:7]} {f.label} of {f.task}")
        if f.prompt:
            lines.append(f"  prompt: {f.prompt[:200]!r}")
        lines.append(f"  saved in step {f.saved_in}" + (f": {f.conclusion}" if f.conclusion
                                                          else "")
                     if f.saved_in is not None else "  not saved as a step yet")
        lines.append(f"  verified: {f.verified}")
    return "\n".join(lines) + "\n"


def _groups(result: WhyResult) -> list[list[LineOrigin]]:
    """Runs of consecutive lines that come from the same checkpoint."""
    out: list[list[LineOrigin]] = []
    for o in result.lines:
        if out and (out[-1][-1].commit, out[-1][-1].label) == (o.commit, o.label) \
                and out[-1][-1].line == o.line - 1:
            out[-1].append(o)
        else:
            out.append([o])
    return out


def _what(o: LineOrigin) -> str:
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


def render_why(result: WhyResult) -> str:
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


def render_blame(result: WhyResult) -> str:
    width = len(str(result.total_lines))
    out = []
    tasks = max((len(o.task) for o in result.lines if o.task), default=0)
    for o in result.lines:
        who = (o.commit[:7] if o.commit else "0000000") + " " + o.label.ljust(22)[:22]
        if tasks:  # across tasks: whose checkpoint it is
            who += " " + (o.task or "").ljust(tasks)
        out.append(f"{who} {str(o.line).rjust(width)}) {o.text}")
    return "\n".join(out) + ("\n" if out else "")
