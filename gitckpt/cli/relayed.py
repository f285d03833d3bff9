"""CLI commands the service runs for a client (gitckpt/entry.py is the asking side): `save`,
`resume`, `log`, `restore` and the rest of service/client.py SERVED, served warm, so they
cost what the service's watcher saw change, not a cold start and a scan of every file.

Contract: a call (CommandCall) is served only when its command is SERVED, its command
line parses, and the client's git environment (GIT_*) equals the
service's (the listener has checked the peer's uid and the GITCKPT_* settings). Anything else
is refused before anything is done, and the client runs the command itself, so a usage error,
`--help` or a command not served always reads as it would have. The answer is the command's
own output (`stdout`, `stderr`, `code`), rendered here as the command renders it, with the
client's terminal and colour settings.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

import click

from gitckpt.cli import pager
from gitckpt.cli.invocation import Ctx
from gitckpt.cli.output import terminal_safe
from gitckpt.core.errors import GitckptError
from gitckpt.core.operations import CommandCall
from gitckpt.engine.notes import json_text
from gitckpt.service.client import SERVED

log = logging.getLogger("gitckpt.relay")


def git_environment(environ: Any = None) -> dict[str, str]:
    """What selects and configures the user's repository for git and libgit2 (GIT_DIR,
    GIT_CONFIG_GLOBAL, ...): a command is served only where it is the same."""
    environ = os.environ if environ is None else environ
    return {k: v for k, v in environ.items() if k.startswith("GIT_")}


class Captured(Ctx):
    """The command's context, writing to buffers for the asker instead of to this process's
    stdout (the MCP channel, in `gitckpt mcp`)."""

    def __init__(self, root: str, as_json: bool, color: str, paging: bool, *, here: str,
                 tty: bool, env: dict[str, str]) -> None:
        super().__init__(os.path.join(here, root), as_json, color, paging)
        self.tty, self.env = tty, env
        self.out: list[str] = []

    def emit(self, result: Any, render: Callable[[Any], str], page: str | None = None) -> None:
        if self.json:
            self.out.append(json_text(result.to_dict()) + "\n")
            return
        text = render(result)  # coloured as pager.show colours it (the client pages none)
        if not pager.wants_color(self.color, self.tty, self.env):
            text = pager.plain(text)
        elif page is not None:
            text = pager.colorize(text, page)
        self.out.append(terminal_safe(text))  # (as echo writes it: the client writes it raw)


def serve(cli: click.Group, call: CommandCall) -> dict[str, Any]:
    """One relayed command line of the CLI `cli` to its output (`stdout`, `stderr`, `code`),
    or `{"refused": why}` with nothing done."""
    argv, here, tty = list(call.argv), call.here, call.tty
    if not os.path.isabs(here):
        return {"refused": "not a command request"}
    if call.git != git_environment():
        return {"refused": "another git environment"}
    made: list[Captured] = []

    shown = {k: v for k, v in call.env.items() if k in ("NO_COLOR", "TERM")}

    def context(*args: Any) -> Captured:
        made.append(Captured(*args, here=here, tty=tty, env=shown))
        return made[-1]

    try:
        with cli.make_context("gitckpt", list(argv), obj=context) as ctx:
            rest = getattr(ctx, "_protected_args", None) or ctx.protected_args
            if not rest or rest[0] not in SERVED:
                return {"refused": "not a command served here"}
            cli.invoke(ctx)
    except (click.ClickException, click.exceptions.Exit, click.Abort):
        return {"refused": "the command line does not parse"}  # its asker says why
    except GitckptError as e:
        out = json_text(e.to_dict()) + "\n" if made and made[0].json else ""
        err = terminal_safe(f"gitckpt: error: {e.message}\n"
                            + (f"hint: {e.hint}\n" if e.hint else ""))
        return {"stdout": out, "stderr": err, "code": 1}
    except Exception as e:  # a bug: its traceback in this process's log
        log.exception("relayed command %r failed", argv)
        return {"stdout": "", "code": 3,
                "stderr": f"gitckpt: internal error in the running gitckpt (pid {os.getpid()})"
                          f" ({type(e).__name__}: {e}); this is a bug. Details: its log.\n"}
    log.info("served `gitckpt %s` for %s", " ".join(argv), here)
    return {"stdout": "".join(made[0].out) if made else "", "stderr": "", "code": 0}
