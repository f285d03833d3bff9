"""The click front end: parse, call `service`, render text or `--json`; errors mapped in one place.

Exit codes: 0 ok, 1 a user error (message and hint on stderr), 2 usage, 3 a bug (traceback in
the log file, one line on stderr), 130 interrupted.
"""

from __future__ import annotations

import json
import sys
import traceback
from typing import Any

import click

from gitckpt import __version__, service
from gitckpt.errors import GitckptError
from gitckpt.logs import write_crash


class Ctx:
    def __init__(self, root: str, as_json: bool) -> None:
        self.root = root
        self.json = as_json

    def emit(self, result: Any, render) -> None:
        if self.json:
            click.echo(json.dumps(result.to_dict(), ensure_ascii=False, indent=2))
        else:
            click.echo(render(result), nl=False)


pass_ctx = click.make_pass_decorator(Ctx)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "root", default=".", metavar="DIR", help="Workspace folder (default: .).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.version_option(__version__, prog_name="gitckpt")
@click.pass_context
def cli(ctx: click.Context, root: str, as_json: bool) -> None:
    """Checkpoints for long agent tasks: save each step, resume anywhere, restore anything."""
    ctx.obj = Ctx(root, as_json)


@cli.command()
@click.argument("name")
@click.option("--goal", default="", help="What the task is for.")
@click.option("--constraints", default="", help="Rules the work must keep to.")
@click.option("--exclude", multiple=True, metavar="PATTERN",
              help="Leave matching files out of snapshots (.gitignore syntax); repeatable.")
@click.option("--plan", multiple=True, metavar="ITEM[=STATUS]",
              help="A plan item (pending, in_progress, done, blocked); repeatable.")
@click.option("--store", default=None, metavar="DIR",
              help="Plain folders only: keep the checkpoints in DIR (default: ./.gitckpt).")
@pass_ctx
def init(c: Ctx, name: str, goal: str, constraints: str, exclude: tuple[str, ...],
         plan: tuple[str, ...], store: str | None) -> None:
    """Start a task NAME: snapshot 0, and make it the active task."""
    result = service.init(c.root, name, goal=goal, constraints=constraints,
                          exclude=list(exclude), plan=list(plan), store=store)
    c.emit(result, render_init)


@cli.command()
@click.argument("title")
@click.option("--conclusion", default="", help="What this step established.")
@click.option("--next", "next_", default="", help="What to do next.")
@click.option("--description", default="", help="Longer notes on the step.")
@click.option("--verified", multiple=True, metavar="TEXT", help="A check that passed; repeatable.")
@click.option("--question", multiple=True, metavar="TEXT", help="An open question; repeatable.")
@click.option("--decision", multiple=True, metavar="TEXT", help="A decision made; repeatable.")
@click.option("--plan", multiple=True, metavar="ITEM[=STATUS]", help="Update a plan item.")
@click.option("--close", is_flag=True, help="This is the last step: end the task.")
@click.option("--task", default=None, metavar="ID", help="Save into this task (default: active).")
@pass_ctx
def save(c: Ctx, title: str, conclusion: str, next_: str, description: str,
         verified: tuple[str, ...], question: tuple[str, ...], decision: tuple[str, ...],
         plan: tuple[str, ...], close: bool, task: str | None) -> None:
    """Save a finished step TITLE with what it concluded and what comes next."""
    result = service.save(c.root, title, conclusion=conclusion, next=next_,
                          description=description, verified=list(verified),
                          open_questions=list(question), decisions=list(decision),
                          plan=list(plan), close=close, task=task)
    c.emit(result, render_save)


@cli.command()
@click.option("--task", default=None, metavar="ID", help="Resume this task (default: active).")
@pass_ctx
def resume(c: Ctx, task: str | None) -> None:
    """Print the handoff: where the task stands and what to do next."""
    c.emit(service.resume(c.root, task=task), lambda r: r.text)


@cli.command()
@click.option("--task", default=None, metavar="ID", help="Show this task (default: active).")
@pass_ctx
def log(c: Ctx, task: str | None) -> None:
    """Show the timeline of a task, newest step first."""
    c.emit(service.log(c.root, task=task), render_log)


@cli.command()
@pass_ctx
def tasks(c: Ctx) -> None:
    """List every task in this workspace's store."""
    c.emit(service.tasks(c.root), render_tasks)


@cli.command()
@click.option("--dir", "where", default=None, metavar="DIR",
              help="Play the demo in this new folder (default: a fresh temporary folder).")
@pass_ctx
def demo(c: Ctx, where: str | None) -> None:
    """Play a short agent session in a throwaway git repository and show the result."""
    from gitckpt.demo import run_demo

    c.emit(run_demo(where), lambda r: r.text)


# -- rendering -------------------------------------------------------------------------------

def _skipped_lines(skipped: list[dict]) -> str:
    if not skipped:
        return ""
    shown = ", ".join(f"{s['path']} ({s['reason']})" for s in skipped[:5])
    more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
    return f"Left out {len(skipped)} file(s): {shown}{more}\n"


def render_init(r: service.InitResult) -> str:
    s = r.save
    out = f"Started task {s.task} ({r.name}); step 0 is {s.commit[:7]}, now active.\n"
    out += _skipped_lines(s.skipped)
    if s.redacted:
        out += f"Redacted {s.redacted} secret value(s) from the text.\n"
    return out + 'Save each finished step: gitckpt save "TITLE" --conclusion ... --next ...\n'


def render_save(r) -> str:
    if r.idempotent:
        return (f"Nothing new since step {r.step} of {r.task} (same title, conclusion, next, "
                f"verified and files); no commit written.\n")
    ch = r.changes
    out = (f"Saved step {r.step} of {r.task} as {r.commit[:7]}: {len(ch.added)} added, "
           f"{len(ch.modified)} modified, {len(ch.deleted)} deleted.\n")
    out += _skipped_lines(r.skipped)
    if r.redacted:
        out += f"Redacted {r.redacted} secret value(s) from the text.\n"
    if r.closed:
        out += f"Task {r.task} is closed; it is read-only from now on.\n"
    return out


def render_log(r: service.LogResult) -> str:
    out = [f"{r.info.id}  {r.info.meta.name}  ({r.info.status})"]
    for s in reversed(r.steps):
        n = s.note
        out.append(f"  {n.step:>3}  {s.commit[:7]}  {n.created_at}  {n.title}"
                   + ("  [closed]" if n.closed else ""))
        if n.conclusion:
            out.append(f"                 conclusion: {n.conclusion}")
        if n.next:
            out.append(f"                 next: {n.next}")
    return "\n".join(out) + "\n"


def render_tasks(r: service.TasksResult) -> str:
    if not r.tasks:
        return 'No tasks yet. Start one with gitckpt init "NAME" --goal "...".\n'
    width = max(len(t.id) for t in r.tasks)
    out = [f"  {'TASK':<{width}}  {'STATUS':<9}  {'STEPS':>5}  {'LAST ACTIVITY':<20}  NAME"]
    for t in r.tasks:
        mark = "*" if t.status == "active" else " "
        out.append(f"{mark} {t.id:<{width}}  {t.status:<9}  {t.head.n:>5}  "
                   f"{t.head.note.created_at:<20}  {t.meta.name}")
    return "\n".join(out) + "\n"


# -- the one error handler -----------------------------------------------------------------

def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with gitckpt's exit codes."""
    as_json = "--json" in (argv if argv is not None else sys.argv[1:])
    try:
        rc = cli.main(args=argv, prog_name="gitckpt", standalone_mode=False)
    except click.ClickException as e:
        e.show()
        sys.exit(2 if isinstance(e, click.UsageError) else 1)
    except (KeyboardInterrupt, click.Abort):
        click.echo("gitckpt: interrupted", err=True)
        sys.exit(130)
    except GitckptError as e:
        if as_json:
            click.echo(json.dumps(e.to_dict(), ensure_ascii=False, indent=2))
        click.echo(f"gitckpt: error: {e.message}", err=True)
        if e.hint:
            click.echo(f"hint: {e.hint}", err=True)
        sys.exit(1)
    except Exception as e:  # a bug: keep the traceback, show one line
        where = write_crash(f"--- gitckpt {__version__} {sys.argv!r}\n{traceback.format_exc()}")
        click.echo(f"gitckpt: internal error ({type(e).__name__}: {e}); this is a bug. "
                   f"Details: {where or 'could not write the log file'}", err=True)
        sys.exit(3)
    sys.exit(rc if isinstance(rc, int) else 0)
