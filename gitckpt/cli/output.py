"""Writing to the terminal: the one place CLI text leaves the process."""

from __future__ import annotations

import os
import re
import sys
from typing import TYPE_CHECKING, Any

from gitckpt.core.errors import GitckptError

if TYPE_CHECKING:
    pass

__all__ = ["PIPE_CLOSED", "OutputFailed", "ReaderGone", "echo", "flush", "written"]

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


#: A terminal's control sequences (CSI, OSC, DCS, SOS, PM, APC, and two-character ones), a
#: C1 control, or a C0 control other than tab and newline. Linear: the classes of a CSI's
#: parts do not overlap, and a string sequence runs to its first terminator.
_CONTROL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?"
                      r"|[PX^_][^\x1b]*(?:\x1b\\)?|[^\[\]PX^_])?"
                      r"|[\x00-\x08\x0b-\x1a\x1c-\x1f\x7f-\x9f]")
_STYLE = re.compile(r"\x1b\[[0-9;]*m")


def terminal_safe(text: str) -> str:
    """`text` with nothing a terminal acts on but the colours (SGR): a note fetched from
    elsewhere, a file name or a command may hold an OSC sequence (a window title, the
    clipboard, a link) or a cursor move, which would otherwise reach the user's terminal."""
    return _CONTROL.sub(lambda m: m[0] if _STYLE.fullmatch(m[0]) else "", text)


def echo(text: str, err: bool = False, color: bool | None = None) -> None:
    """click.echo(text, nl=False), except that file names which are not UTF-8 go out as their
    own bytes, and nothing a terminal acts on but colours goes out (`terminal_safe`); a failed
    write is raised as what it means (`written`)."""
    import click

    text = terminal_safe(text)
    stream: Any = sys.stderr if err else sys.stdout
    if stream is None:
        return  # no stream to write to (click writes nothing either)
    try:
        try:
            click.echo(text, nl=False, err=err, color=color)
        except UnicodeEncodeError:
            binary = stream.buffer
            if (not stream.isatty()) if color is None else not color:  # click's choice
                text = click.unstyle(text)
            stream.flush()
            binary.write(text.encode("utf-8", "surrogateescape"))
            binary.flush()
    except OSError as e:
        raise written(e, stream) from None


def raised_in_click(e: BaseException) -> bool:
    """Whether `e` came from click's own code (its echo of a help text or a prompt), not from a
    command's work, where a broken pipe (a socket, a child) is a bug to report."""
    tb = e.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and str(tb.tb_frame.f_globals.get("__name__", "")).startswith("click")
