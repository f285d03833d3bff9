"""`gitckpt hook ...`: the agent hosts' hook commands and `hook install`. The four event
commands are normally reached through `gitckpt.entry` without loading click (a hook runs on
every tool call); these definitions give them their help text and the same behaviour."""

from __future__ import annotations

import sys

import click

from gitckpt.cli.declared import pass_ctx
from gitckpt.cli.invocation import Ctx
from gitckpt.cli.output import ReaderGone, echo
from gitckpt.hooks import HOST_NAMES

# Not a click.Choice: a wrong host must not be click's exit 2 (it blocks a host's Stop); the
# hook says so in its log line and exits 0.
_HOST = click.option("--host", default="claude", show_default=True, metavar="|".join(HOST_NAMES),
                     help="The agent host whose JSON is on stdin.")


@click.group()
def hook() -> None:
    """Agent hosts' hooks: handoff at session start, a drift per tool call, reminders."""


def _event(kind: str, doc: str) -> click.Command:
    @hook.command(kind, help=doc)
    @_HOST
    @click.option("--cli", is_flag=True, help="Name CLI commands in what the agent reads, not "
                  "tool calls (a host without gitckpt's MCP server).")
    def command(host: str, cli: bool) -> None:
        from gitckpt.hooks import run as hooks
        from gitckpt.hooks.ends import emit

        if host not in HOST_NAMES:
            emit("", f"hook: unknown host {host!r}; hosts: {', '.join(HOST_NAMES)}")
            sys.exit(0)
        hooks.main(host, kind, hooks.read_stdin(), "cli" if cli else "mcp")

    return command


_event("session-start", "Print the active task's handoff as the session's context (or "
       "nothing).")
_event("prompt", "Keep the user's prompt (redacted) for the drifts and the step that follow.")
_event("post-tool", "Record a drift attributed to the tool call that just ran, if files "
       "changed.")
_event("pre-compact", "Before a compaction: keep a one-line reminder if the step is not saved.")
_event("stop", "When the agent stops: remind it once to save the step if files changed.")


_SCOPE = click.option("--scope", type=click.Choice(["project", "local", "user"]),
                      default="project", show_default=True,
                      help="project: the shared, committed config; local: the host's "
                           "untracked one beside it; user: your own, for every project.")


def _config_command(name: str, verb: str, remove: bool, doc: str) -> None:
    """`hook install` or `hook uninstall`: the same options, one direction each."""
    @hook.command(name, help=doc)
    @click.option("--host", type=click.Choice(list(HOST_NAMES)),
                  help=f"The agent host whose config {verb} gitckpt's hooks.")
    @_SCOPE
    @click.option("--mcp", is_flag=True,
                  help=f"The host's MCP settings {verb} gitckpt's server too (`gitckpt mcp`).")
    @click.option("--git", "git_hook", is_flag=True,
                  help=f"Instead, this repository {verb} gitckpt's prepare-commit-msg hook, "
                       "which adds a `Checkpoint: <task> step <n>` trailer to each commit.")
    @click.option("--dry-run", is_flag=True, help="Print the diff; write nothing.")
    @click.option("--yes", is_flag=True, help="Write without asking (a terminal asks first).")
    @pass_ctx
    def command(c: Ctx, host: str | None, scope: str, mcp: bool, git_hook: bool,
                dry_run: bool, yes: bool) -> None:
        if git_hook == (host is not None):
            raise click.UsageError("Name a host with --host, or --git for the commit hook.")
        if git_hook and mcp:
            raise click.UsageError("--mcp is a host's: --git takes none.")
        _apply(c, host or "git", scope, mcp, dry_run, yes, remove=remove)


_config_command("install", "gets", False,
                "Write gitckpt's hooks into the host's config, after showing the diff. "
                "Where the host has no gitckpt MCP server (and no --mcp), the hooks tell the "
                "agent CLI commands instead of tool calls.")
_config_command("uninstall", "loses", True,
                "Take gitckpt's hooks out of the host's config (every other hook and key "
                "stays).")


def _apply(c: Ctx, host: str, scope: str, mcp: bool, dry_run: bool, yes: bool, *,
           remove: bool) -> None:
    from gitckpt.hooks import install as hook_install

    if host == "git":
        from gitckpt.hooks import git_trailer

        plans = [git_trailer.plan(c.root, remove=remove)]
    else:
        plans = hook_install.plans(c.root, host, scope, remove=remove, mcp=mcp)
    results = []
    gone: ReaderGone | None = None  # the diff's reader went away: see below
    for plan in plans:
        if plan.changed and not dry_run:
            asks = not yes and not c.json and sys.stdin.isatty()
            if not c.json:
                try:
                    echo(plan.diff)
                except ReaderGone as e:
                    # Unasked, every file is written all the same (never half of an install);
                    # asked, no one may confirm a diff that was not shown.
                    gone = e
            if asks and (gone or not click.confirm(f"Write {plan.path}?", default=True,
                                                   err=True)):
                raise gone or click.Abort()
            plan = hook_install.write(plan)
        results.append(plan)
    if gone is not None:
        raise gone
    if c.json:
        from gitckpt.engine.notes import json_text

        out = results[0].to_dict()
        if len(results) > 1:
            out["mcp"] = results[1].to_dict()  # the host's MCP file, where it is another
        echo(json_text(out) + "\n")
        return
    for plan in results:
        if not plan.changed:
            what = "none of gitckpt's" if remove else "gitckpt's"
            echo(f"{plan.path} has {what} {'hooks' if plan is results[0] else 'server'}"
                 f"{'' if remove else ' already'}.\n")
        elif dry_run:
            echo(plan.diff)
            echo(f"(dry run: {plan.path} not written)\n", err=True)
        else:
            echo(f"Wrote {plan.path}.\n")
    if not remove and any(p.written for p in results):
        echo(_after(host))
    elif remove and host == "git" and results[0].changed is False and results[0].old:
        echo(f"{results[0].path} is a hook of your own; it was left as it is.\n")


@hook.command("commit-msg")
@click.argument("message_file", metavar="FILE")
@click.argument("source", required=False, default="")
@click.argument("commit", required=False, default="")
@pass_ctx
def commit_msg(c: Ctx, message_file: str, source: str, commit: str) -> None:
    """git's prepare-commit-msg (installed by `hook install --git`): add a `Checkpoint: <task>
    step <n>` trailer to the message in FILE. Never fails the commit."""
    from gitckpt.hooks import git_trailer
    from gitckpt.hooks.ends import emit

    try:
        from gitckpt.service import events
        from gitckpt.service.workspace import open_workspace

        said = git_trailer.add(c.path(message_file), source,
                               events.commit_trailer(open_workspace(c.root)))
    except Exception as e:  # a commit of the user's goes on whatever happened here
        said = f"no trailer ({type(e).__name__}: {e})"
    emit("", f"hook commit-msg: {said}")


def _after(host: str) -> str:
    notes = {
        "codex": "Codex skips hooks it does not trust, silently: trust this project (Codex "
                 "asks when it starts here, or `codex exec --trust`), then open /hooks in "
                 "Codex and trust each gitckpt hook (again after any change to them).\n",
        "gemini": "Gemini CLI asks before it runs new project hooks; hooks are on unless "
                  "hooksConfig.enabled is false.\n",
        "windsurf": "Windsurf has no session or compaction hooks: only tool calls are "
                    "attributed; resume with ckpt_resume.\n",
    }
    return notes.get(host, "")
