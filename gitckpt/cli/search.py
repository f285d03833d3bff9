"""The CLI's `search` (what every task's notes say, best first, one line a hit) and `report`
(a task as Markdown for a pull request, or one HTML page, written or opened)."""

from __future__ import annotations

import os
import sys

import click

from gitckpt.cli.base import Ctx, echo, pass_ctx, service
from gitckpt.cli.complete import complete_task

_KINDS = ("title", "conclusion", "next", "description", "verified", "decision", "gotcha",
          "question", "answered", "dropped", "command", "file", "prompt", "tool", "goal")


@click.command()
@click.argument("query", nargs=-1, required=True)
@click.option("--task", default=None, metavar="ID", shell_complete=complete_task,
              help="Only this task's notes.")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(_KINDS), metavar="KIND",
              help=f"Only fields of this kind; repeatable ({', '.join(_KINDS)}).")
@click.option("--since", default=None, metavar="WHEN",
              help="Only checkpoints since then: a duration (7d, 12h) or a date.")
@click.option("--limit", type=click.IntRange(1, 1000), default=20, show_default=True,
              help="At most this many hits.")
@click.option("--split", is_flag=True,
              help="Let camelCase identifiers match by their parts (parseConfig: parse, "
                   "config).")
@pass_ctx
def search(c: Ctx, query: tuple[str, ...], task: str | None, kinds: tuple[str, ...],
           since: str | None, limit: int, split: bool) -> None:
    """Was this tried before? Every task's notes (fetched and imported ones too): titles,
    conclusions, next actions, decisions, gotchas, questions, commands with their exit codes,
    file notes, prompts and tool commands; each word of QUERY must occur ("quoted phrase",
    prefix*), best first (BM25). Words are runs of letters and digits: parse_config is
    `parse config`."""
    c.emit(service.search(c.root, " ".join(query), task=task, kinds=kinds, since=since,
                          limit=limit, split=split), render_search)


def render_search(r) -> str:
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


@click.command()
@click.argument("task", required=False, shell_complete=complete_task)
@click.option("--markdown", "fmt", flag_value="markdown", default=True,
              help="Markdown for a pull request's body (default), on stdout.")
@click.option("--html", "fmt", flag_value="html", help="One self-contained HTML page.")
@click.option("-o", "--output", default=None, metavar="FILE",
              help="Write it to FILE (a new file, or a file it replaces); else stdout.")
@click.option("--open", "open_it", is_flag=True,
              help="Open the HTML report in the browser (written to the temporary folder "
                   "without -o).")
@pass_ctx
def report(c: Ctx, task: str | None, fmt: str, output: str | None, open_it: bool) -> None:
    """A task (default: active) as a reviewer reads it: goal, plan, steps and their
    conclusions, verification bound to trees, decisions, open questions, files changed,
    prompts and tokens. `gitckpt report | gh pr create --body-file -`."""
    html = fmt == "html" or open_it
    r = service.report(c.root, task=task, html=html)
    if open_it and output is None:  # not in the workspace, where the next save would take it
        import tempfile

        output = os.path.join(tempfile.gettempdir(), f"gitckpt-report-{r.task}.html")
    if output is None:
        c.emit(r, lambda r: r.text, None)
        return
    from gitckpt.core import atomic

    path = os.path.abspath(output)
    if os.path.lexists(path) and (os.path.islink(path) or not os.path.isfile(path)):
        raise click.UsageError(f"{output} exists and is not a plain file; -o writes a new "
                               "file or replaces a file (without -o the report goes to stdout).")
    if not os.path.isdir(os.path.dirname(path)):
        raise click.UsageError(f"The folder of {output} does not exist.")
    try:
        atomic.replace_path(path, r.text.encode("utf-8"), mode=0o644)
    except OSError as e:
        raise click.UsageError(f"Cannot write {output}: {e.strerror}.") from e
    if c.json:
        from gitckpt.engine.notes import json_text

        echo(json_text({"task": r.task, "format": r.format, "path": path,
                        "bytes": len(r.text.encode())}) + "\n")
    else:
        echo(f"Wrote {path} ({len(r.text.encode()):,} bytes).\n", err=not sys.stdout.isatty())
    if open_it:
        import webbrowser

        webbrowser.open("file://" + path)


COMMANDS = (search, report)
