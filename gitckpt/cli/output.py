"""Writing to the terminal: the one place CLI text leaves the process."""

from __future__ import annotations

import codecs
import os
import re
import sys
from typing import TYPE_CHECKING, Any, cast

from gitckpt.core.errors import GitckptError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import BinaryIO

__all__ = ["PIPE_CLOSED", "OutputFailed", "ReaderGone", "echo", "flush", "written"]

#: click's own pattern for what it strips (click/_compat.py `_ansi_re`; 8.5 changed it, hence
#: pyproject's `click>=8.5`).
_ANSI = re.compile(r"\033\[[0-?]*[ -/]*[@-~]")

#: The exit code of a command whose reader went away (`gitckpt log | head`): git's, which
#: SIGPIPE ends; Python ignores SIGPIPE, so gitckpt meets a BrokenPipeError instead.
PIPE_CLOSED = 128 + 13


class ReaderGone(BrokenPipeError):
    """The reader of gitckpt's output went away: the command ends with PIPE_CLOSED and says
    nothing. Raised only for gitckpt's own writes, so a broken pipe anywhere else (a socket, a
    child) is still the bug it is."""


class OutputFailed(GitckptError):
    """The output could not be written (a full disk, `> /dev/full`): one line and exit 1, as
    git's "write failure on standard output"."""

    code = "output"


def written(e: OSError, stream: Any) -> ReaderGone | OutputFailed:
    """What a failed write of `stream` means. The stream is pointed at /dev/null first, so
    what is left in its buffer, and the interpreter's last flush, write nowhere instead of
    failing again (exit status 120)."""
    _discard(stream)
    if isinstance(e, BrokenPipeError):
        return ReaderGone(*e.args)
    which = "error" if stream is sys.stderr else "output"
    return OutputFailed(f"cannot write to standard {which}: {e.strerror or e}",
                        "Free space where the output goes, or send it elsewhere.")


def flush() -> None:
    """Flush stdout, so a write that fails is found here rather than at the interpreter's exit."""
    if sys.stdout is not None:
        try:
            sys.stdout.flush()
        except OSError as e:
            raise written(e, sys.stdout) from None


def _discard(stream: Any) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(devnull, stream.fileno())
    except (OSError, ValueError, AttributeError):
        pass
    finally:
        os.close(devnull)


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
    try:
        _echo(stream, text, err, color)
    except OSError as e:
        raise written(e, stream) from None


def _echo(stream: Any, text: str, err: bool, color: bool | None) -> None:
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
        # (click 8.5 serves this deprecated name from its module __getattr__, typed `object`)
        get_binary_stream = cast("Callable[[str], BinaryIO]", click.get_binary_stream)
        stream = get_binary_stream("stderr" if err else "stdout")
        if not stream.isatty() and not color:
            text = click.unstyle(text)
        stream.write(text.encode("utf-8", "surrogateescape"))
        stream.flush()


def raised_in_click(e: BaseException) -> bool:
    """Whether `e` came from click's own code (its echo of a help text or a prompt), not from a
    command's work, where a broken pipe (a socket, a child) is a bug to report."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and str(tb.tb_frame.f_globals.get("__name__", "")).startswith("click")
