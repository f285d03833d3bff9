"""The requests of the hosts' hooks: a session starts, a prompt, a tool ran, a compaction,
a stop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gitckpt.core.inputs import ToolCall
from gitckpt.core.ops.fields import Voice
from gitckpt.core.request import Request, arg

if TYPE_CHECKING:  # the results, named in the class bases' strings (which ruff does not
    # read as types) for the type checker only: the layers above own them
    from typing import Any  # noqa: F401

    from gitckpt.engine.records import DriftResult  # noqa: F401
    from gitckpt.service.events import Reminder, Start  # noqa: F401


@dataclass(frozen=True)
class SessionStartRequest(Request["Start | None"]):
    """A session starts in the workspace (or resumes, is cleared or compacted)."""

    op = "session_start"

    compacted: bool = arg(default=False)
    voice: Voice = arg(default="mcp")
    session: str | None = arg(default=None)
    source: str | None = arg(default=None)
    transcript: str | None = arg(default=None)
    host: str = arg(default="")


@dataclass(frozen=True)
class PromptRequest(Request["dict[str, Any] | None"]):
    """The user submitted a prompt."""

    op = "prompt"

    text: str = arg()
    session: str | None = arg(default=None)
    host: str = arg(default="")
    model: str | None = arg(default=None)
    transcript: str | None = arg(default=None)


@dataclass(frozen=True)
class ToolRanRequest(Request["DriftResult | None"]):
    """A host's tool that changes files has run: its changes become a drift attributed to
    that tool `call` (`transcript`: the session's, remembered for the step's usage, not kept in the
    drift)."""

    op = "tool_ran"

    call: ToolCall = arg()
    transcript: str | None = arg(default=None)
    lock_wait: float = arg(default=1.0)


@dataclass(frozen=True)
class CompactingRequest(Request["Reminder | None"]):
    """The host is about to compact the session's context."""

    op = "compacting"

    lock_wait: float = arg(default=1.0)


@dataclass(frozen=True)
class StoppingRequest(Request["Reminder | None"]):
    """The agent is about to stop (`again`: it is already continuing for a hook)."""

    op = "stopping"

    again: bool = arg(default=False)
    lock_wait: float = arg(default=1.0)


# -- what a client hands to a running gitckpt ------------------------------------------------


@dataclass(frozen=True)
class HookCall(Request["dict[str, Any]"]):
    """A host's hook event handed by the hook's process to a running gitckpt: the host, the
    event (`session-start`, `post-tool`, ...), the host's JSON as read from stdin, the hook's
    own folder, the voice its texts speak in, and the prefix of the tool names they use
    (GITCKPT_TOOL_PREFIX of the hook's process; "": the host's own, hooks/hosts.py)."""

    op = "hook"

    host: str = arg()
    event: str = arg()
    raw: str = arg()
    here: str = arg()
    voice: Voice = arg(default="mcp")
    prefix: str = arg(default="")


@dataclass(frozen=True)
class CommandCall(Request["dict[str, Any]"]):
    """A command line handed by the CLI's process to a running gitckpt: its words, the folder
    it was typed in, whether its output is a terminal, the environment that decides its colours
    (NO_COLOR, TERM), and the git environment (GIT_*) that selects the user's repository."""

    op = "command"

    argv: tuple[str, ...] = arg()
    here: str = arg()
    tty: bool = arg(default=False)
    env: dict[str, str] = arg(factory=dict)
    git: dict[str, str] = arg(factory=dict)
