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
from gitckpt.cli.complete import VAR as COMPLETE_VAR
from gitckpt.cli.complete import completion
from gitckpt.cli.daemon import service_group
from gitckpt.cli.declared import pass_ctx
from gitckpt.cli.hook import hook
from gitckpt.cli.invocation import Ctx, TerminalProgress
from gitckpt.cli.output import echo, raised_in_click, written
from gitckpt.cli.search import COMMANDS as SEARCH_COMMANDS
from gitckpt.cli.steps import COMMANDS as STEP_COMMANDS
from gitckpt.cli.transfer import COMMANDS as TRANSFER_COMMANDS
from gitckpt.cli.undo import COMMANDS as UNDO_COMMANDS
from gitckpt.cli.upkeep import COMMANDS as UPKEEP_COMMANDS
from gitckpt.cli.why import COMMANDS as WHY_COMMANDS
from gitckpt.core import progress as progressing


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
@click.option("--root", default=None, metavar="DIR",
              help="The workspace (default: GITCKPT_ROOT, the client's first root, or here).")
@pass_ctx
def mcp(c: Ctx, root: str | None) -> None:
    """Serve the MCP tools over stdio (for agents); logs go to stderr and the store."""
    from gitckpt.mcp.bridge import main as bridge

    if root is not None and "$" not in root:  # (an unexpanded $VAR is refused later)
        root = os.path.abspath(c.path(root))
    if c.root != ".":
        os.chdir(c.root)  # -C DIR: as if started in DIR (the server's folder when none is named)
    bridge(root)


@cli.group()
def skill() -> None:
    """SKILL.md: the contract that teaches an agent to save each step."""


@skill.command("install")
@click.argument("folder", metavar="DIR")
@click.option("--force", is_flag=True, help="Overwrite an existing DIR/SKILL.md.")
@pass_ctx
def skill_install(c: Ctx, folder: str, force: bool) -> None:
    """Write SKILL.md into DIR (for example ~/.claude/skills/gitckpt)."""
    from gitckpt.cli.skill import install

    echo(f"Wrote {install(c.path(folder), force)}\n")


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

    c.emit(run_demo(c.path(where) if where is not None else None), lambda r: r.text)


# -- the one error handler -----------------------------------------------------------------

for _command in (*STEP_COMMANDS, *WHY_COMMANDS, *SEARCH_COMMANDS, *UNDO_COMMANDS,
                 *TRANSFER_COMMANDS, *UPKEEP_COMMANDS, hook, completion, service_group):
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
