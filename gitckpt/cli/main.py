"""The click front end: parse, call `service`, render text or `--json`; errors mapped in one place.

Exit codes: 0 ok, 1 a user error (message and hint on stderr), 2 usage, 3 a bug (traceback in
the log file, one line on stderr), 130 interrupted.
"""

from __future__ import annotations

import os
import sys

import click

from gitckpt import __version__
from gitckpt.cli import invocation
from gitckpt.cli.base import (
    Ctx,
    PathsAfterDashes,
    TerminalProgress,
    echo,
    pass_ctx,
    paths_after,
    plan_items,
    service,
)
from gitckpt.cli.complete import VAR as COMPLETE_VAR
from gitckpt.cli.complete import complete_target, complete_task, completion
from gitckpt.cli.hook import hook
from gitckpt.cli.output import raised_in_click, written
from gitckpt.cli.remote import COMMANDS as REMOTE_COMMANDS
from gitckpt.cli.render import (
    render_capture,
    render_compress,
    render_diff,
    render_doctor,
    render_export,
    render_import,
    render_init,
    render_log,
    render_migrate,
    render_restore,
    render_scope,
    render_switch,
    render_tasks,
)
from gitckpt.cli.revert import revert
from gitckpt.cli.search import COMMANDS as SEARCH_COMMANDS
from gitckpt.cli.why import COMMANDS as WHY_COMMANDS
from gitckpt.core import progress as progressing
from gitckpt.engine.notes import json_text


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("-C", "root", default=".", metavar="DIR", help="Workspace folder (default: .).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--color", type=click.Choice(["auto", "always", "never"]), default="auto",
              help="Colour output: auto (a terminal, no NO_COLOR), always or never.")
@click.option("--no-pager", is_flag=True,
              help="Do not page long output (GITCKPT_PAGER, GIT_PAGER, core.pager, PAGER, "
                   "less -FRX).")
@click.version_option(__version__, prog_name="gitckpt")
@click.pass_context
def cli(ctx: click.Context, root: str, as_json: bool, color: str, no_pager: bool) -> None:
    """Checkpoints for long agent tasks: save each step, resume anywhere, restore anything."""
    ctx.obj = (ctx.obj or Ctx)(root, as_json, color, not no_pager)  # a relayed one: captured


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
                          exclude=list(exclude), plan=plan_items(plan)[0], store=store)
    c.emit(result, render_init)


@cli.command()
@click.argument("title")
@click.option("--conclusion", default="", help="What this step established.")
@click.option("--next", "next_", multiple=True, metavar="TEXT",
              help="What to do next; repeat for ordered next actions.")
@click.option("--description", default="", help="Longer notes on the step.")
@click.option("--verified", multiple=True, metavar="TEXT", help="A check that passed; repeatable.")
@click.option("--ran", multiple=True, metavar="CMD",
              help="A command that ran on the workspace as saved; pair each with --exit.")
@click.option("--exit", "exits", multiple=True, type=int, metavar="N",
              help="The exit code of the --ran at the same position.")
@click.option("--question", multiple=True, metavar="TEXT", help="An open question; repeatable.")
@click.option("--answered", multiple=True, metavar="TEXT",
              help="An open question this step answers (its exact text); repeatable.")
@click.option("--decision", multiple=True, metavar="TEXT", help="A decision made; repeatable.")
@click.option("--gotcha", multiple=True, metavar="TEXT",
              help="A trap the next session must know; repeatable.")
@click.option("--drop", multiple=True, metavar="TEXT",
              help="Retire a decision, gotcha or open question (its exact text); repeatable.")
@click.option("--file", "files", multiple=True, metavar="PATH[=NOTE]",
              help="A file that matters, and why; repeatable.")
@click.option("--plan", multiple=True, metavar="ITEM[=STATUS]", help="Update a plan item.")
@click.option("--close", is_flag=True, help="This is the last step: end the task.")
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Save into this task (default: active).")
@pass_ctx
def save(c: Ctx, title: str, conclusion: str, next_: tuple[str, ...], description: str,
         verified: tuple[str, ...], ran: tuple[str, ...], exits: tuple[int, ...],
         question: tuple[str, ...], answered: tuple[str, ...], decision: tuple[str, ...],
         gotcha: tuple[str, ...], drop: tuple[str, ...], files: tuple[str, ...],
         plan: tuple[str, ...], close: bool, task: str | None) -> None:
    """Save a finished step TITLE with what it concluded and what comes next.

    Decisions, gotchas and open questions accumulate over the task until a step retires
    them (--answered, --drop). Commands run with `gitckpt run` join the step by themselves."""
    if len(ran) != len(exits):
        raise click.UsageError("Give each --ran its --exit, in the same order "
                               f"({len(ran)} --ran, {len(exits)} --exit).")
    invocation.save(c, title, conclusion, next_, description, verified, ran, exits, question,
                    answered, decision, gotcha, drop, files, plan, close, task)


@cli.command("scope")
@click.argument("paths", nargs=-1, required=True)
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Use this task's excludes.")
@pass_ctx
def scope_(c: Ctx, paths: tuple[str, ...], task: str | None) -> None:
    """Say for each PATH whether snapshots take it, and the rule that decided.

    Like `git check-ignore -v`: a sensitive file names the rule (a folder, a name, a marker
    in its content); a `!PATH` line in .ckptignore brings back a file wrongly left out.
    """
    result = service.scope(c.root, paths, task=task, cwd=c.root)
    c.emit(result, render_scope)


@cli.command()
@pass_ctx
def adopt(c: Ctx) -> None:
    """Adopt this folder's .gitckpt store after moving or copying the folder here.

    A store is used only for the folder it was made for; adopt records the new path, and the
    tasks of the old one continue here.
    """
    result = service.adopt(c.root)
    c.emit(result, lambda r: f"{r.store} is now the store of {r.workspace}"
           + (f" (tasks of {', '.join(r.earlier)} continue here).\n" if r.earlier else ".\n"))


@cli.command()
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Resume this task (default: active).")
@click.option("--full", is_flag=True,
              help="Every step, decision, question, command and file note (no length limit).")
@pass_ctx
def resume(c: Ctx, task: str | None, full: bool) -> None:
    """Print the handoff: where the task stands and what to do next."""
    invocation.resume(c, task, full)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Record into this task.")
@click.argument("argv", nargs=-1, required=True, type=click.UNPROCESSED, metavar="-- CMD...")
@pass_ctx
def run(c: Ctx, task: str | None, argv: tuple[str, ...]) -> None:
    """Run CMD in the workspace and record its exit code and duration for the next save,
    bound to the files as they were when it ran. Its output shows as it goes; gitckpt exits
    with its exit code."""
    result = service.run(c.root, list(argv), task=task)
    if result.failure:
        echo(f"gitckpt run: {result.failure}\n", err=True)
    if c.json:
        echo(json_text(result.to_dict()) + "\n")
    echo(f"gitckpt: `{result.command}` exited {result.exit_code} after "
         f"{result.duration_s:g} s; the next save records it (tree {result.tree[:7]}).\n",
         err=True)
    code = result.exit_code
    raise SystemExit(code if 0 <= code <= 255 else 128 - code if code < 0 else 1)


@cli.command()
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Show this task (default: active).")
@click.option("--steps", "steps_only", is_flag=True, help="Hide the drifts between steps.")
@click.option("--limit", type=int, default=None, metavar="N", help="Only the newest N steps.")
@click.option("--before", type=int, default=None, metavar="N",
              help="Only steps older than step N (pages back with --limit).")
@click.option("--step", type=int, default=None, metavar="N", help="Only step N, in full.")
@pass_ctx
def log(c: Ctx, task: str | None, steps_only: bool, limit: int | None, before: int | None,
        step: int | None) -> None:
    """Show the timeline of a task (steps and drifts), newest first."""
    c.emit(service.log(c.root, task=task, steps_only=steps_only, limit=limit, before=before,
                       step=step), render_log, "log")


@cli.command()
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Capture into this task.")
@pass_ctx
def capture(c: Ctx, task: str | None) -> None:
    """Record a drift now if files changed since the last step or drift."""
    c.emit(service.capture(c.root, task=task), render_capture)


@cli.command()
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Capture into this task.")
@pass_ctx
def watch(c: Ctx, task: str | None) -> int:
    """Watch the workspace in the foreground and record drifts as files change (Ctrl-C ends).

    Events are hints: after GITCKPT_QUIET seconds without one (default 2), or GITCKPT_MAX_WAIT
    seconds of continuous changes (default 30), a snapshot decides. Without file events it
    polls every GITCKPT_POLL seconds (default 15)."""
    import signal

    from gitckpt.cli.relayed import start_relay
    from gitckpt.engine.watch import run_until_stopped, stop_signals_waited

    # Signals are blocked before any thread starts, so every thread inherits the mask.
    with stop_signals_waited() as waits:
        shown = invocation.ShownUntilUnread(c, render_capture)
        session = service.watch(c.root, task=task, on_drift=shown)
        shown.stop = session.stop
        relay = start_relay(cli)  # hosts' hooks run here, warm
        who = f"task {task}" if task else f"the active task (now {session.task})"
        echo(f"Watching {session.root} for {who} ({session.watcher.mode}); "
             "Ctrl-C stops.\n", err=True)
        if waits:
            run_until_stopped(session.run, session.stop)
        else:
            signal.signal(signal.SIGTERM, lambda *_: session.stop())
            try:
                session.run()
            except KeyboardInterrupt:
                session.stop()
    if relay is not None:
        relay.close()
    echo("Stopped watching.\n", err=True)
    code = shown.ended()
    if waits:  # the watcher's work is done or abandoned: no interpreter shutdown may hang it
        import logging
        import os

        sys.stdout.flush()
        sys.stderr.flush()
        logging.shutdown()
        os._exit(code)
    return code


@cli.command(cls=PathsAfterDashes)
@click.argument("target", shell_complete=complete_target)
@click.argument("paths", nargs=-1, metavar="[--] [PATH]...")
@click.option("--apply", "do_apply", is_flag=True,
              help="Do it (default: only show the plan). Prints the safety copy's id.")
@click.option("--patch", is_flag=True, help="Show the unified diff of every file to change.")
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Restore within this task.")
@click.option("--expect", default=None, metavar="PLAN",
              help="The plan id of the preview you approved (the preview's apply line shows "
                   "it): if the plan is now another, nothing is written and the new one shown.")
@click.option("--yes", "confirm", is_flag=True,
              help="Confirm an apply that deletes or rewrites many files (more than 500, or "
                   "more than half of the workspace).")
@pass_ctx
def restore(c: Ctx, target: str, paths: tuple[str, ...], do_apply: bool, patch: bool,
            task: str | None, expect: str | None, confirm: bool) -> None:
    """Restore TARGET (a step number, head, tip, a commit id prefix, or a ref): preview, or
    --apply.

    The preview changes nothing. --apply first saves the workspace as a safety copy; restoring
    that copy's id undoes the restore. PATHs limit the restore to these files or folders.
    Left-out files (ignored, excluded, sensitive, too large) are never written or deleted.
    """
    paths = paths_after(paths)
    result = service.restore(c.root, target, apply=do_apply, paths=paths, task=task,
                             patch=patch, expect=expect, cwd=c.root, confirm=confirm)
    again = ["gitckpt", *(["-C", c.root] if c.root != "." else []), "restore", target,
             *(["--task", task] if task else [])]
    c.emit(result, lambda r: render_restore(r, again, paths), None if do_apply else "plan")


@cli.command(cls=PathsAfterDashes)
@click.argument("base", shell_complete=complete_target)
@click.argument("target", required=False, default="live", shell_complete=complete_target)
@click.option("--patch", is_flag=True, help="Print the unified patch, not only the paths.")
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Count step numbers in this task.")
@pass_ctx
def diff(c: Ctx, base: str, target: str, patch: bool, task: str | None) -> None:
    """What changed from BASE to TARGET (default: the live workspace) [-- PATH...].

    Each is a step number, head, tip, a commit id prefix, a ref, or `live`."""
    result = service.diff(c.root, base, target, paths=paths_after(), patch=patch, task=task,
                          cwd=c.root)
    c.emit(result, render_diff, "patch" if patch else None)


@cli.command()
@pass_ctx
def tasks(c: Ctx) -> None:
    """List every task in this workspace's store."""
    c.emit(service.tasks(c.root), render_tasks)


@cli.command()
@click.argument("task", shell_complete=complete_task)
@pass_ctx
def switch(c: Ctx, task: str) -> None:
    """Make TASK the active task again (the active one is suspended)."""
    c.emit(service.switch(c.root, task), render_switch)


@cli.command()
@click.option("--to", "to", required=True, metavar="DIR", help="The package folder to create.")
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Export this task (default: active).")
@pass_ctx
def export(c: Ctx, to: str, task: str | None) -> None:
    """Write a handoff package of a task: HANDOFF.md, manifest.json, checkpoints.git/."""
    c.emit(service.export(c.root, to, task=task), render_export)


@cli.command("import")
@click.argument("package")
@click.option("--as", "as_id", default=None, metavar="ID",
              help="Import under this task id (when the package's id is taken here).")
@click.option("--dry-run", is_flag=True, help="Only check the package and say what it holds.")
@click.option("--checkout", is_flag=True,
              help="Then put the head's files into the workspace (a restore, with a safety "
                   "copy that undoes it).")
@click.option("--yes", "confirm", is_flag=True,
              help="With --checkout: confirm a restore that deletes or rewrites many files.")
@click.option("--from", "source", default=None,
              type=click.Choice(["claude-checkpoint", "task-checkpoint"]),
              help="PACKAGE is a .claude-checkpoint file, or a task-checkpoint-mcp store (or "
                   "its workspace), instead of a gitckpt package.")
@pass_ctx
def import_(c: Ctx, package: str, as_id: str | None, dry_run: bool, checkout: bool,
            confirm: bool, source: str | None) -> None:
    """Import a handoff package; its task becomes the active task here."""
    if source is not None:
        if as_id or dry_run or checkout:
            raise click.UsageError("--as, --dry-run and --checkout are for gitckpt packages, "
                                   "not --from.")
        c.emit(service.migrate(c.root, source, package), render_migrate)
        return
    if dry_run and checkout:
        raise click.UsageError("--dry-run writes nothing: it cannot --checkout.")
    c.emit(service.import_(c.root, package, as_id=as_id, dry_run=dry_run, checkout=checkout,
                           confirm=confirm), render_import)


@cli.command()
@click.option("--keep", default="7d", show_default=True, metavar="DURATION",
              help="Keep drift chains newer than this (s, m, h, d, w).")
@click.option("--min", "min_steps", default=3, show_default=True, type=click.IntRange(0),
              help="Always keep the drifts after the newest N steps of each task.")
@click.option("--dry-run", is_flag=True, help="Show what would be dropped; change nothing.")
@pass_ctx
def compress(c: Ctx, keep: str, min_steps: int, dry_run: bool) -> None:
    """Reclaim space from old drifts. Steps are never touched."""
    c.emit(service.compress(c.root, keep=keep, min_steps=min_steps, dry_run=dry_run),
           render_compress)


@cli.command()
@click.option("--fix", is_flag=True, help="Repair what can be repaired without losing data.")
@pass_ctx
def doctor(c: Ctx, fix: bool) -> None:
    """Check the store: say what is wrong and how to fix it (exit 1 if anything is)."""
    result = service.doctor(c.root, fix=fix)
    c.emit(result, render_doctor)
    if not result.healthy:
        raise SystemExit(1)


@cli.command()
@click.option("--root", default=None, metavar="DIR",
              help="The workspace (default: GITCKPT_ROOT, the client's first root, or here).")
def mcp(root: str | None) -> None:
    """Serve the MCP tools over stdio (for agents); logs go to stderr and the store."""
    from gitckpt.mcp import handshake as mcp_handshake

    wire = mcp_handshake.claim()
    held = mcp_handshake.answer(wire)  # before the SDK loads: hosts wait for this answer
    from gitckpt.cli.relayed import start_relay
    from gitckpt.mcp.server import leave_on_signals, run

    started: list = []  # before the relay's socket exists: a SIGTERM then takes it away too
    leave_on_signals(lambda: [r.close() for r in started])
    relay = start_relay(cli)  # hosts' hooks run in this process, warm
    if relay is not None:
        started.append(relay)
    try:
        run(root, wire, held, on_exit=relay.close if relay is not None else None)
    finally:
        if relay is not None:
            relay.close()


@cli.group()
def skill() -> None:
    """SKILL.md: the contract that teaches an agent to save each step."""


@skill.command("install")
@click.argument("folder", metavar="DIR")
@click.option("--force", is_flag=True, help="Overwrite an existing DIR/SKILL.md.")
def skill_install(folder: str, force: bool) -> None:
    """Write SKILL.md into DIR (for example ~/.claude/skills/gitckpt)."""
    from gitckpt.cli.skill import install

    echo(f"Wrote {install(folder, force)}\n")


@skill.command("print")
def skill_print() -> None:
    """Print SKILL.md."""
    from gitckpt.cli.skill import skill_text

    echo(skill_text())


@skill.command("path")
def skill_path() -> None:
    """Print where the installed SKILL.md is."""
    from gitckpt.cli.skill import skill_path as where

    echo(f"{where()}\n")


@cli.command()
@click.option("--dir", "where", default=None, metavar="DIR",
              help="Play the demo in this new folder (default: a fresh temporary folder).")
@pass_ctx
def demo(c: Ctx, where: str | None) -> None:
    """Play a short agent session in a throwaway git repository and show the result."""
    from gitckpt.cli.demo import run_demo

    c.emit(run_demo(where), lambda r: r.text)


# -- the one error handler -----------------------------------------------------------------

for _command in (*REMOTE_COMMANDS, *WHY_COMMANDS, *SEARCH_COMMANDS, revert, hook, completion):
    cli.add_command(_command)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI and exit with gitckpt's exit codes (gitckpt/cli/invocation.py `finish`)."""
    if os.environ.get(COMPLETE_VAR):  # a shell asks for completions (cli_complete)
        cli.main(list(argv or []), prog_name="gitckpt", complete_var=COMPLETE_VAR)
        return
    made: list[click.Context] = []

    def work() -> object:
        try:
            args = list(argv if argv is not None else sys.argv[1:])
            try:
                ctx = cli.make_context("gitckpt", args)
            except OSError as e:  # click's own help or usage text could not be written
                raise written(e, sys.stdout) from None
            with ctx:
                made.append(ctx)
                show = sys.stderr.isatty() and not ctx.params.get("as_json")
                with progressing.reporting(TerminalProgress() if show else None):
                    try:
                        return cli.invoke(ctx)
                    except OSError as e:
                        if not raised_in_click(e):
                            raise
                        raise written(e, sys.stdout) from None  # a command's help, a prompt
        except click.exceptions.Exit as e:  # --help, --version
            sys.exit(e.exit_code)
        except click.ClickException as e:
            try:
                e.show()
            except OSError as failed:
                raise written(failed, sys.stderr) from None
            sys.exit(2 if isinstance(e, click.UsageError) else 1)
        except click.Abort:
            raise KeyboardInterrupt from None

    invocation.finish(work, lambda: bool(made and made[0].params.get("as_json")))
