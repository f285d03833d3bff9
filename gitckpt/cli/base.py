"""What every click command shares: the context of one invocation (gitckpt/cli/invocation.py,
which the quick parser uses too), click's decorator that hands it over, and the commands whose
words after `--` are paths."""

from __future__ import annotations

import click

from gitckpt.cli.invocation import Ctx, TerminalProgress, plan_items, service
from gitckpt.cli.output import echo

__all__ = ["Ctx", "PathsAfterDashes", "TerminalProgress", "echo", "pass_ctx", "paths_after",
           "plan_items", "service"]

pass_ctx = click.make_pass_decorator(Ctx)


class PathsAfterDashes(click.Command):
    """A command whose words after `--` are paths, kept apart from its positional targets."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["paths"] = args[:at], tuple(args[at + 1:])
        return super().parse_args(ctx, args)


def paths_after(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    return extra + click.get_current_context().meta.get("paths", ())
