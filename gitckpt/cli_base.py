"""What every CLI command shares: the context of one invocation, and output that survives
file names which are not UTF-8."""

from __future__ import annotations

from typing import Any

import click

from gitckpt.lazy import lazy
from gitckpt.notes import json_text

# `gitckpt mcp` must answer its client before the engine (pygit2, the stores) loads.
service = lazy("gitckpt.service")


class Ctx:
    def __init__(self, root: str, as_json: bool) -> None:
        self.root = root
        self.json = as_json

    def emit(self, result: Any, render) -> None:
        echo(json_text(result.to_dict()) + "\n" if self.json else render(result))


def echo(text: str, err: bool = False) -> None:
    """click.echo, except that file names which are not UTF-8 go out as their own bytes."""
    try:
        click.echo(text, nl=False, err=err)
    except UnicodeEncodeError:
        stream = click.get_binary_stream("stderr" if err else "stdout")
        if not stream.isatty():
            text = click.unstyle(text)
        stream.write(text.encode("utf-8", "surrogateescape"))
        stream.flush()


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
