"""What many requests take alike: a task id, the voice texts are spelled in, and the kinds of
note fields a search is narrowed to."""

from __future__ import annotations

from typing import Any, Literal

from gitckpt.core.request import arg

Voice = Literal["cli", "mcp"]

#: What `search` can be narrowed to.
KINDS = ("title", "conclusion", "next", "description", "verified", "decision", "gotcha",
         "question", "answered", "dropped", "command", "file", "prompt", "tool", "goal")
Kind = Literal["title", "conclusion", "next", "description", "verified", "decision", "gotcha",
               "question", "answered", "dropped", "command", "file", "prompt", "tool", "goal"]


def task(help: str, **spec: Any) -> Any:
    """The `task` input most operations take: a task id, default the active task (the MCP
    server's instructions say so once)."""
    return arg(help, brief="", metavar="ID", complete="task", default=None, **spec)


def voice(**spec: Any) -> Any:
    """How texts name what to do next: CLI commands or tool calls; the front end's own."""
    return arg(cli=None, mcp=False, default="cli", **spec)
