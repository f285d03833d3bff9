"""Writing to the terminal: the one place CLI text leaves the process."""

from __future__ import annotations

import codecs
import os
import re
import sys
from typing import Any

__all__ = ["PIPE_CLOSED", "discard", "echo"]

#: click's own pattern for what it strips (click/_compat.py `_ansi_re`; 8.5 changed it, hence
#: pyproject's `click>=8.5`).
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")

#: The exit code of a command whose reader went away (`gitckpt log | head`): git's, which
#: SIGPIPE ends; Python ignores SIGPIPE, so gitckpt meets a BrokenPipeError instead.
PIPE_CLOSED = 128 + 13


def discard(*streams: Any) -> None:
    """Point `streams` at /dev/null, their readers gone: what is left in their buffers, and
    the interpreter's last flush, then write nowhere instead of failing again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        for stream in streams:
            if stream is not None:
                os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def echo(text: str, err: bool = False, color: bool | None = None) -> None:
    """click.echo(text, nl=False), except that file names which are not UTF-8 go out as their
    own bytes, and without importing click (`gitckpt resume` and `save` run without it,
    gitckpt/cli/quick.py). `color=True` keeps colour codes where click would strip them (not
    a terminal), `color=False` strips them everywhere, None strips them off a terminal.

    Contract: the bytes written are click.echo's (tests/cli/test_quick.py compares them).
    A stream click would re-wrap (an ASCII one, or one without an encoding) is handed to
    click.echo itself."""
    stream: Any = sys.stderr if err else sys.stdout
    if stream is None:
        return  # no stream to write to (click writes nothing either)
    if not _plain_text(stream):
        _click_echo(text, err, color)
        return
    if text and _strips(stream, color):
        text = _ANSI.sub("", text)
    if text:
        try:
            stream.write(text)
        except UnicodeEncodeError:
            stream.flush()
            stream.buffer.write(text.encode("utf-8", "surrogateescape"))
    stream.flush()


def _plain_text(stream: Any) -> bool:
    """A text stream that click.echo writes to as it is: it has an encoding that is not
    ASCII, an error handler, and a binary buffer beneath for the surrogate fallback."""
    encoding, errors = getattr(stream, "encoding", None), getattr(stream, "errors", None)
    if not encoding or not errors or getattr(stream, "buffer", None) is None:
        return False
    try:
        return codecs.lookup(encoding).name != "ascii"
    except LookupError:
        return True  # click's is_ascii_encoding: an unknown encoding is not ASCII


def _strips(stream: Any, color: bool | None) -> bool:
    """click's should_strip_ansi, outside a click context (whose `color` gitckpt never sets)."""
    if color is not None:
        return not color
    try:
        tty = stream.isatty()
    except Exception:
        tty = False
    return not tty and not type(stream).__module__.startswith("ipykernel.")


def _click_echo(text: str, err: bool, color: bool | None) -> None:
    """The rare stream click re-wraps: click itself writes, with the same fallback."""
    import click

    try:
        click.echo(text, nl=False, err=err, color=color)
    except UnicodeEncodeError:
        stream = click.get_binary_stream("stderr" if err else "stdout")
        if not stream.isatty() and not color:
            text = click.unstyle(text)
        stream.write(text.encode("utf-8", "surrogateescape"))
        stream.flush()
