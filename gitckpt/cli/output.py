"""Writing to the terminal: the one place CLI text leaves the process."""

from __future__ import annotations

import click

__all__ = ["echo"]


def echo(text: str, err: bool = False, color: bool | None = None) -> None:
    """click.echo, except that file names which are not UTF-8 go out as their own bytes.
    `color=True` keeps colour codes where click would strip them (not a terminal)."""
    try:
        click.echo(text, nl=False, err=err, color=color)
    except UnicodeEncodeError:
        stream = click.get_binary_stream("stderr" if err else "stdout")
        if not stream.isatty() and not color:
            text = click.unstyle(text)
        stream.write(text.encode("utf-8", "surrogateescape"))
        stream.flush()
