"""The CLI's `search` (what every task's notes say, best first, one line a hit) and `report`
(a task as Markdown for a pull request, or one HTML page, written or opened)."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from gitckpt.cli.declared import command
from gitckpt.cli.invocation import Ctx
from gitckpt.cli.output import echo
from gitckpt.core import operations as ops

if TYPE_CHECKING:
    from gitckpt.engine.search import SearchResult


@command(ops.SearchRequest)
def search(c: Ctx, r: ops.SearchRequest) -> None:
    c.emit(c.perform(r), render_search)


def render_search(r: SearchResult) -> str:
    """One line a hit: task, checkpoint, kind, the snippet with its matches in bold (the
    pager takes the bold out where colour is off)."""
    if not r.hits:
        return f"No checkpoint's notes hold {r.query!r} ({r.indexed} checkpoints read).\n"
    width = max(len(h.task) for h in r.hits)
    out = []
    for h in r.hits:
        text = " ".join(h.text.split())
        for word in h.matched:
            text = text.replace(word, f"\x1b[1m{word}\x1b[0m")
        out.append(f"{h.task.ljust(width)}  {h.label:<20} {h.kind:<10} {text}")
    if r.more:
        out.append(f"(more hits: --limit {len(r.hits) * 2})")
    return "\n".join(out) + "\n"


@command(ops.ReportRequest)
def report(c: Ctx, r: ops.ReportRequest) -> None:
    if r.output == "-":  # (as git and most tools read it: standard output)
        r = dataclasses.replace(r, output=None)
    result = c.perform(r)
    output = c.path(r.output) if r.output is not None else None
    if r.open and output is None:  # not in the workspace, where the next save would take it
        import tempfile

        output = os.path.join(tempfile.gettempdir(), f"gitckpt-report-{result.task}.html")
    if output is None:
        c.emit(result, lambda r: r.text, None)
        return
    from gitckpt.core import atomic

    path = os.path.abspath(output)
    shown = r.output or output
    inside = next((part for part in Path(os.path.realpath(path)).parts[:-1]
                   if part in (".git", ".gitckpt")), None)
    if inside is not None or os.path.basename(path) in (".git", ".gitckpt"):
        # (`-o .git/config` replaced the user's git config: every later command failed)
        raise click.UsageError(f"{shown} is inside {inside or os.path.basename(path)}/, "
                               "git's or gitckpt's own; write the report elsewhere (or "
                               "without -o, to stdout).")
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isfile(path)):
        raise click.UsageError(f"{shown} exists and is not a plain file; -o writes a new "
                               "file or replaces a file (without -o the report goes to stdout).")
    if not os.path.isdir(os.path.dirname(path)):
        raise click.UsageError(f"The folder of {shown} does not exist.")
    try:
        atomic.replace_path(path, result.text.encode("utf-8"), mode=0o644)
    except OSError as e:
        raise click.UsageError(f"Cannot write {shown}: {e.strerror}.") from e
    size = len(result.text.encode())
    if c.json:
        from gitckpt.engine.notes import json_text

        echo(json_text({"task": result.task, "format": result.format, "path": path,
                        "bytes": size}) + "\n")
    else:
        echo(f"Wrote {path} ({size:,} bytes).\n", err=not sys.stdout.isatty())
    if r.open:
        import webbrowser

        webbrowser.open("file://" + path)


COMMANDS = (search, report)
