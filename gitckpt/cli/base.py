"""What every CLI command shares: the context of one invocation, and output that survives
file names which are not UTF-8."""

from __future__ import annotations

from typing import Any

import click

from gitckpt.cli.output import echo
from gitckpt.core.lazy import lazy
from gitckpt.engine.notes import json_text

# `gitckpt mcp` must answer its client before the engine (pygit2, the stores) loads.
service = lazy("gitckpt.service.api")


class Ctx:
    def __init__(self, root: str, as_json: bool, color: str = "auto",
                 paging: bool = True) -> None:
        self.root = root
        self.json = as_json
        self.color = color  # --color: auto | always | never
        self.paging = paging  # not --no-pager

    def emit(self, result: Any, render, page: str | None = None) -> None:
        """The result as --json, or rendered; `page` names long output (log, patch, plan)
        that is coloured and paged as git's is (gitckpt.pager)."""
        if self.json:
            echo(json_text(result.to_dict()) + "\n")
        else:
            from gitckpt.cli import pager

            pager.show(render(result), page, color=self.color, paging=self.paging,
                       root=self.root)


pass_ctx = click.make_pass_decorator(Ctx)


def plan_items(texts: tuple[str, ...] | list[str]) -> tuple[list, list[str]]:
    """`--plan` values as plan items: "TEXT[=STATUS]", "+TEXT[=STATUS]" for an item said to
    be new (else its text must match one); and the texts said to be new."""
    from gitckpt.engine.notes import PlanItem

    items, new = [], []
    for text in texts:
        fresh = text.startswith("+")
        item = PlanItem.parse(text[1:] if fresh else text)
        items.append(item)
        if fresh:
            new.append(item.item)
    return items, new


class TerminalProgress:
    """Progress reports as click's bar on stderr (a count where the total is unknown); the
    CLI installs it only when stderr is a terminal and the output is not --json."""

    def __init__(self) -> None:
        self.bar = None
        self.what = None
        self.broken = False

    def __call__(self, r) -> None:
        """Draw `r`; a terminal that went away ends the bar, never the work."""
        if self.broken:
            return
        try:
            self._draw(r)
        except Exception:
            self.broken = True

    def _draw(self, r) -> None:
        import sys

        if r.what != self.what:
            self._end()
            self.what = r.what
            if r.total:
                self.bar = click.progressbar(length=r.total, label=r.what, file=sys.stderr,
                                             show_pos=True, width=30)
        if self.bar is not None:
            self.bar.length = max(self.bar.length or 0, r.total or 0, r.done)
            self.bar.update(r.done - self.bar.pos)
        else:
            click.echo(f"\r{r.message()}\x1b[K", nl=False, err=True)
        if r.final:
            self._end()

    def _end(self) -> None:
        if self.bar is not None:
            self.bar.render_finish()
            self.bar = None
        elif self.what is not None:
            click.echo("", err=True)
        self.what = None


class PathsAfterDashes(click.Command):
    """A command whose words after `--` are paths, kept apart from its positional targets."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["paths"] = args[:at], tuple(args[at + 1:])
        return super().parse_args(ctx, args)


def paths_after(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    return extra + click.get_current_context().meta.get("paths", ())
