"""One CLI invocation: its context (the folder it works in, how it writes), its progress bar,
and how it ends (exit codes, errors in one place). click is imported only to draw a progress
bar on a terminal; the service only when a command first calls it (`gitckpt mcp` answers its
client before the engine loads).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from gitckpt import __version__
from gitckpt.cli.output import PIPE_CLOSED, OutputFailed, ReaderGone, echo, flush
from gitckpt.core.errors import GitckptError
from gitckpt.core.request import Request
from gitckpt.engine.notes import json_text

if TYPE_CHECKING:
    from gitckpt.core.progress import Report
    from gitckpt.service.workspace import Workspace

R = TypeVar("R")


class Ctx:
    """One invocation: `root` is the folder it works in as if started there (`-C`), and
    what its output is (`--json`, `--color`, paging)."""

    def __init__(self, root: str, as_json: bool, color: str = "auto",
                 paging: bool = True) -> None:
        self.root = root
        self.json = as_json
        self.color = color  # --color: auto | always | never
        self.paging = paging  # not --no-pager

    def path(self, given: str) -> str:
        """A path the user gave, read from the invocation's folder (`-C DIR`: from DIR)."""
        return os.path.join(self.root, os.path.expanduser(given))

    def open(self, request: Request[Any]) -> Workspace:
        """The workspace `request` acts on, opened once, the invocation's folder its
        caller's."""
        from gitckpt.service.workspace import opened

        return opened(self.root, request, cwd=self.root)

    def perform(self, request: Request[R]) -> R:
        """The service's result of `request`, in the workspace it opens."""
        from gitckpt.service.dispatch import perform

        return perform(self.open(request), request)

    def emit(self, result: Any, render: Callable[[Any], str], page: str | None = None) -> None:
        """The result as --json, or rendered; `page` names long output (log, patch, plan)
        that is coloured and paged as git's is (gitckpt.pager)."""
        if self.json:
            echo(json_text(result.to_dict()) + "\n")
        else:
            from gitckpt.cli import pager

            pager.show(render(result), page, color=self.color, paging=self.paging,
                       root=self.root)


class ShownUntilUnread:
    """A watch's `on_drift`: each recorded drift shown, until the output cannot be written (its
    reader went away, as in `gitckpt watch | head -1`, or a full disk). Then the watch is
    stopped, rather than failing each later drift, and `ended` gives the command's exit code
    as `finish` would (141 silently, or 1 with the error line). The drift is recorded by then."""

    def __init__(self, c: Ctx, render: Callable[[Any], str]) -> None:
        self.c, self.render = c, render
        self.stop: Callable[[], None] | None = None  # the watch's, once it has started
        self.failed: ReaderGone | OutputFailed | None = None

    def __call__(self, result: Any) -> None:
        if self.failed is not None:
            return
        try:
            self.c.emit(result, self.render)
        except (ReaderGone, OutputFailed) as e:
            self.failed = e
            if self.stop is not None:
                self.stop()  # thread-safe: sets a flag the watch loop reads after this capture

    def ended(self) -> int:
        if isinstance(self.failed, OutputFailed):
            _say(self.failed, self.c.json)
            return 1
        return PIPE_CLOSED if self.failed is not None else 0


def finish(work: Callable[[], object], as_json: Callable[[], bool]) -> NoReturn:
    """Run a parsed command line's `work` and exit with gitckpt's codes: 0, or its own int;
    1 a GitckptError (message and hint on stderr, and its JSON on stdout when `as_json()`), an
    output that cannot be written among them; 130 interrupted; 3 a bug (the traceback in the
    log file, one line on stderr); 141, silently, when the output's reader went away (a
    command writes after its work: a save is saved by then). A parser's own exits (usage 2,
    --help) are SystemExit, and pass through."""
    try:
        _finish(work, as_json)
    except ReaderGone:  # as git under SIGPIPE: no message, for no one reads it
        sys.exit(PIPE_CLOSED)


def _finish(work: Callable[[], object], as_json: Callable[[], bool]) -> NoReturn:
    try:
        rc = work()
        flush()
    except KeyboardInterrupt:
        _err("gitckpt: interrupted\n")
        sys.exit(130)
    except GitckptError as e:
        _say(e, as_json())  # --json as parsed, not as typed
        sys.exit(1)
    except ReaderGone:
        raise
    except Exception as e:  # a bug: keep the traceback, show one line
        from gitckpt.store.logs import write_traceback

        where = write_traceback(f"--- gitckpt {__version__} {sys.argv!r}")
        _err(f"gitckpt: internal error ({type(e).__name__}: {e}); this is a bug. "
             f"Details: {where or 'could not write the log file'}\n")
        sys.exit(3)
    sys.exit(rc if isinstance(rc, int) else 0)


def _say(e: GitckptError, as_json: bool) -> None:
    """An error's JSON on stdout and its lines on stderr, each where it can still be written:
    a stdout gone or full does not silence the message."""
    if as_json and not isinstance(e, OutputFailed):
        try:
            echo(json_text(e.to_dict()) + "\n")
        except (ReaderGone, OutputFailed):
            pass
    _err(f"gitckpt: error: {e.message}\n" + (f"hint: {e.hint}\n" if e.hint else ""))


def _err(text: str) -> None:
    """A last line on stderr, if stderr can still be written: the exit code says the rest."""
    try:
        echo(text, err=True)
    except (ReaderGone, OutputFailed):
        pass


class TerminalProgress:
    """Progress reports as click's bar on stderr (a count where the total is unknown); the
    CLI installs it only when stderr is a terminal and the output is not --json. click is
    imported at the first report, so a command that reports nothing never loads it."""

    def __init__(self) -> None:
        self.bar: Any = None  # click's ProgressBar, while a phase with a total is drawn
        self.what: str | None = None
        self.broken = False

    def __call__(self, r: Report) -> None:
        """Draw `r`; a terminal that went away ends the bar, never the work."""
        if self.broken:
            return
        try:
            self._draw(r)
        except Exception:
            self.broken = True

    def _draw(self, r: Report) -> None:
        import click

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
        import click

        if self.bar is not None:
            self.bar.render_finish()
            self.bar = None
        elif self.what is not None:
            click.echo("", err=True)
        self.what = None
