"""The structured values a request carries down to the engine: a command that ran, a file that
matters, a plan entry, and the host's tool call behind a drift. Plain data, declared as request
fields are (core/request.py): their JSON forms and schemas are derived from these classes, and
their CLI text forms are read in core/decode.py."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from gitckpt.core.request import arg

PlanStatus = Literal["pending", "in_progress", "done", "blocked"]


@dataclass(frozen=True)
class CommandRun:
    """A command that ran on the workspace as it is saved, and how it ended."""

    command: str = arg(brief="")
    exit_code: int = arg(brief="")
    # (not in the MCP schema: an agent gives a command and its exit code; a note or a
    # duration come from `gitckpt run` and JSON input)
    note: str | None = arg(brief="", default=None, mcp=False)
    duration_s: float | None = arg(brief="", default=None, mcp=False)


@dataclass(frozen=True)
class FileNote:
    """A file or folder that matters, and why (`PATH[=NOTE]` on the command line)."""

    path: str = arg(brief="")
    note: str = arg(brief="", default="")


@dataclass(frozen=True)
class PlanEntry:
    """An item of the task's checklist (`ITEM[=STATUS]` on the command line)."""

    item: str = arg(brief="")
    status: PlanStatus = arg(brief="", default="pending")


@dataclass(frozen=True)
class PlanUpdate:
    """A plan entry a step updates, matched by its text, or (`add`) a new one
    (`[+]ITEM[=STATUS]` on the command line)."""

    item: str = arg("Its text.", brief="")
    status: PlanStatus = arg(brief="", default="pending")
    add: bool = arg("New (else the text must match).", brief="New item.", default=False)


@dataclass(frozen=True)
class ToolCall:
    """The host's tool call that made a drift's changes, as a hook heard it: the tool's name,
    the host, the session, a shell tool's command line, and the id of the newest prompt of
    the session (the engine redacts and cuts the command where the drift is written)."""

    name: str
    host: str = ""
    session: str | None = None
    command: str | None = None
    prompt: str | None = None

    def to_note(self, command: str) -> dict[str, Any]:
        """Its form in a drift's note, with `command` as the note keeps it (the engine's
        redacted cut of it): the keys that have a value."""
        out: dict[str, Any] = {"name": self.name, "host": self.host}
        for key, value in (("session", self.session), ("command", command),
                           ("prompt", self.prompt)):
            if value is not None and (key != "command" or self.command is not None):
                out[key] = value
        return out
