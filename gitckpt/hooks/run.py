"""The agent hosts' front end: one hook event (the host's JSON on stdin) becomes a handoff, an
attributed drift or a one-line reminder; stdout carries only what the host reads, and no error
of ours ever fails the host (exit 0 and a log line).

Each host's event names and fields are in `hooks/hosts.py`; this module knows only the four
moments: a session starts (or is resumed, cleared or compacted), the user submits a prompt, a
tool that changes files has run, the context is about to be compacted, the agent is about to
stop; each is one call into `service/events.py`.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gitckpt.core import hints, json_input
from gitckpt.core.inputs import ToolCall
from gitckpt.core.ops.events import (
    CommandCall,
    CompactingRequest,
    HookCall,
    PromptRequest,
    SessionStartRequest,
    StoppingRequest,
    ToolRanRequest,
)
from gitckpt.core.ops.fields import Voice
from gitckpt.hooks import EVENTS
from gitckpt.hooks.ends import emit, hook_folder
from gitckpt.hooks.hosts import HOSTS, Event, Host

if TYPE_CHECKING:
    from gitckpt.service.events import Unsaved
    from gitckpt.service.workspace import Workspace

__all__ = ["EVENTS", "answer", "main", "run", "serve"]

#: A hook gives up on a busy store after this long: the change is then the next boundary's.
LOCK_WAIT = 1.0


@dataclass(frozen=True)
class Outcome:
    """What one hook run did: `stdout` for the host, `log` a line for the log file."""

    stdout: str = ""
    log: str = ""


def run(host_name: str, kind: str, raw: str, here: str, voice: Voice = "mcp",
        prefix: str = "") -> Outcome:
    """One hook event (`here`: the hook's own working folder; `voice`: whether its texts name
    tool calls or CLI commands; `prefix`: the hook's GITCKPT_TOOL_PREFIX, else the host's).
    Never raises: any failure is the host's empty answer and a log line."""
    host = HOSTS.get(host_name)
    # the texts name the tools as this host shows them (reset: the service's thread goes on)
    token = hints.HOST_PREFIX.set(prefix or (host.tools if host is not None else ""))
    try:
        outcome = _run(host_name, kind, raw, here, voice)
    finally:
        hints.HOST_PREFIX.reset(token)
    if not outcome.stdout and host is not None:
        return Outcome(host.nothing(), outcome.log)
    return outcome


def _run(host_name: str, kind: str, raw: str, here: str, voice: Voice) -> Outcome:
    try:
        host = HOSTS[host_name]
        if kind not in host.events:
            return Outcome(log=f"{host.title} has no {kind} hook; nothing done")
        try:
            data = json_input.loads(raw) if raw.strip() else None
        except ValueError as e:
            return Outcome(log=f"the host's input is not JSON ({e}); nothing done")
        except RecursionError:
            return Outcome(log="the host's input is nested too deep to be read; nothing done")
        if not isinstance(data, dict):
            return Outcome(log="the host's input is not a JSON object; nothing done")
        event = replace(host.event(kind, data, here), voice=voice)
        if event.cwd is None:
            return Outcome(log="the host's input names no folder (cwd); nothing done")
        if not os.path.isdir(event.cwd):
            return Outcome(log=f"{event.cwd} is not a folder; nothing done")
        from gitckpt.core.errors import GitckptError
        from gitckpt.service.workspace import open_workspace

        try:
            ws = open_workspace(event.cwd)  # once, for the event; nothing is created here
        except GitckptError:  # no store can be used here: as a folder without a task
            return Outcome(log=f"no active task at {event.cwd}")
        return _ACTIONS[kind](host, event, ws)
    except Exception as e:  # the host's session goes on whatever happened here
        from gitckpt.core.errors import GitckptError

        if isinstance(e, GitckptError):
            return Outcome(log=f"{e.message}{f' ({e.hint})' if e.hint else ''}")
        if isinstance(e, OSError):  # a read-only or vanished store or workspace
            return Outcome(log=f"cannot use the store or the workspace: {e}")
        from gitckpt.store.logs import write_traceback

        where = write_traceback(f"--- gitckpt hook {host_name} {kind}")
        return Outcome(log=f"internal error ({type(e).__name__}: {e}); details: {where}")


def _session_start(host: Host, event: Event, ws: Workspace) -> Outcome:
    from gitckpt.service import events

    start = events.session_start(ws, SessionStartRequest(
        event.source == "compact", event.voice, event.session, event.source, event.transcript,
        host.name))
    if start is None:
        return Outcome(log=f"no active task at {ws.cwd}")
    if start.twice is not None:  # the host runs two recipes (it reads another host's file)
        return Outcome(log=f"session start: the handoff of {start.task} was given "
                           f"{start.twice:.1f} s ago by another gitckpt hook of this start "
                           "(the host runs two recipes); not twice")
    resume = hints.call("resume").spell(event.voice)
    head = (f"gitckpt: the task below was in progress in this workspace; its handoff (as "
            f"{resume} gives it) follows. Go on from it, and save each finished step.\n\n")
    text = head + start.text
    if start.compacted is not None:  # PreCompact's reminder, said where the agent hears it
        text = _unsaved_line(start.compacted, event.voice) + "\n\n" + text
    return Outcome(host.context("session-start", text),
                   f"session {event.source or 'start'}: handoff of {start.task}")


def _post_tool(host: Host, event: Event, ws: Workspace) -> Outcome:
    from gitckpt.service import events

    if not host.changes_files(event.tool):
        return Outcome(log=f"{event.tool} does not change files; nothing done")
    # the command is redacted and cut where the drift is written (Timeline.record_drift); the
    # transcript is remembered for the step's usage, not kept in the drift
    tool = ToolCall(event.tool or "?", host.name, event.session, event.command)
    start = time.monotonic()
    d = events.tool_ran(ws, ToolRanRequest(tool, event.transcript, LOCK_WAIT))
    if d is None:
        return Outcome(log=f"no active task at {ws.cwd}")
    took = f"{(time.monotonic() - start) * 1000:.0f} ms"
    if not d.recorded:
        return Outcome(log=f"{event.tool}: no files changed ({took})")
    return Outcome(host.post_tool_output(),
                   f"{event.tool}: drift {d.commit[:7]}, {len(d.changes.paths())} paths ({took})")


def _prompt(host: Host, event: Event, ws: Workspace) -> Outcome:
    from gitckpt.service import events

    if not event.prompt:
        return Outcome(log="the host's input holds no prompt; nothing done")
    words = users_words(event.prompt)
    if not words:
        return Outcome(log="the prompt is gitckpt's own handoff or reminder, come back as "
                           "a user message; not kept")
    kept = events.prompted(ws, PromptRequest(words, event.session, host.name,
                                             event.model, event.transcript))
    if kept is None:
        return Outcome(log=f"no active task at {ws.cwd}")
    return Outcome(host.prompt_output(), f"prompt {kept['id']} kept ({len(kept['text'])} chars)")


#: How gitckpt's texts to the agent begin: the handoff, and a reminder of unsaved files.
HANDOFF_HEAD = "gitckpt: the task below was in progress in this workspace"
_REMINDER = re.compile(r"gitckpt: \d+ files? changed since step \d+ ")
#: The opening tag of a block a host wraps a message or context in (`<hook_context>`,
#: Copilot's `<current_datetime>`, Codex's `<hook_prompt ...>`).
_OPEN = re.compile(r"<([A-Za-z_][\w-]*)(?:\s[^<>]*)?>")


def _ours(text: str) -> bool:
    text = text.lstrip()
    return text.startswith(HANDOFF_HEAD) or _REMINDER.match(text) is not None


def users_words(prompt: str) -> str:
    """The user's own words in what a host's prompt hook calls the prompt: hosts hand back
    gitckpt's texts as user messages (a stop reminder that continues the turn, Copilot CLI,
    Gemini CLI) or put the handoff before the user's text (Gemini CLI's `<hook_context>`).
    Of the tagged blocks a host puts first, those holding a text of gitckpt's are dropped,
    the others kept; a prompt that is, past them, one of gitckpt's texts is none of the
    user's (""). Linear in the prompt: each block is read once, from its start, and a prompt
    of the user's is never searched for blocks (a hook sees it before any cap)."""
    kept, at = [], 0
    while True:
        block = at
        while block < len(prompt) and prompt[block].isspace():
            block += 1
        m = _OPEN.match(prompt, block)
        end = prompt.find(f"</{m[1]}>", m.end()) if m is not None else -1
        if m is None or end < 0:
            break  # the user's text (an opening never closed is the user's too)
        close = end + len(m[1]) + 3
        if not _ours(prompt[m.end():end]):
            kept.append(prompt[at:close])  # (with the space before it)
        at = close
    rest = prompt[at:]
    return "" if _ours(rest) else ("".join(kept) + rest).strip()


def _unsaved_line(u: Unsaved, voice: str) -> str:
    files = f"{u.changed} file{'' if u.changed == 1 else 's'}"
    how = hints.call("save", title=hints.BLANK, conclusion=hints.BLANK,
                     next=hints.BLANK).spell(voice)  # a tool as the host names it, or a command
    return (f"gitckpt: {files} changed since step {u.step} ({u.title!r}) and are not saved "
            f"as a step; if that work is finished, save it with {how}.")


def _pre_compact(host: Host, event: Event, ws: Workspace) -> Outcome:
    from gitckpt.service import events

    if not event.compressing:
        return Outcome(log="pre-compact: the host may not compress (it says so before every "
                           "request); nothing done")
    r = events.compacting(ws, CompactingRequest(LOCK_WAIT))
    if r is None:
        return Outcome(log=f"no active task at {ws.cwd}")
    u = r.unsaved
    if not u.changed:
        return Outcome(log=f"pre-compact: nothing unsaved since step {u.step}")
    files = f"{u.changed} file{'' if u.changed == 1 else 's'}"
    if r.said:  # kept for the session after the compaction all the same
        return Outcome(log=f"pre-compact: {files} unsaved, already said since step {u.step}")
    return Outcome(host.remind("pre-compact", _unsaved_line(u, event.voice)),
                   f"pre-compact: {files} unsaved")


def _stop(host: Host, event: Event, ws: Workspace) -> Outcome:
    from gitckpt.service import events

    s = events.stopping(ws, StoppingRequest(event.stop_active or event.aborted, LOCK_WAIT))
    if s is None:
        return Outcome(log=f"no active task at {ws.cwd}")
    u = s.unsaved
    files = f"{u.changed} file{'' if u.changed == 1 else 's'}"
    if not u.changed:
        return Outcome(log=f"stop: nothing unsaved since step {u.step}")
    if event.aborted:
        return Outcome(log=f"stop: the user stopped the agent; {files} unsaved, no reminder")
    if event.stop_active:
        return Outcome(log="stop: the agent is already continuing for a hook; not again")
    if s.said:
        return Outcome(log=f"stop: {files} unsaved, already said since step {u.step}")
    return Outcome(host.remind("stop", _unsaved_line(u, event.voice)),
                   f"stop: reminded, {files} unsaved")


_ACTIONS = {"session-start": _session_start, "prompt": _prompt, "post-tool": _post_tool,
            "pre-compact": _pre_compact, "stop": _stop}


def serve(call: HookCall) -> dict[str, str]:
    """A hook the service runs for a client (service/client.py)."""
    if call.host not in HOSTS or call.event not in _ACTIONS:
        return {"refused": "not a hook request"}
    outcome = run(call.host, call.event, call.raw, call.here, call.voice, call.prefix)
    return {"stdout": outcome.stdout, "log": outcome.log}


def answer(message: dict[str, Any],
           commands: Callable[[CommandCall], dict[str, Any]] | None = None) -> dict[str, Any]:
    """The service's answer to `message`, `{"op": "hook" | "command", "request": <the call's wire
    form>}`: a hook served here, a command line by `commands` (the CLI's side,
    gitckpt/cli/relayed.py), anything else refused with nothing done."""
    from gitckpt.core.decode import decode
    from gitckpt.core.errors import InvalidArgument

    kind = {"hook": HookCall, "command": CommandCall}.get(str(message.get("op")))
    try:
        call = decode(kind, message.get("request")) if kind is not None else None
    except InvalidArgument:
        call = None
    if isinstance(call, CommandCall):
        return commands(call) if commands is not None else {"refused": "no commands"}
    if isinstance(call, HookCall):
        return serve(call)
    return {"refused": "not a request"}


def read_stdin() -> str:
    """The host's input; "" when stdin is closed or unreadable (the hook then says so)."""
    stream = getattr(sys.stdin, "buffer", None)
    try:
        return stream.read().decode("utf-8", "replace") if stream is not None else ""
    except (OSError, ValueError):
        return ""


def main(host_name: str, kind: str, raw: str, voice: Voice = "mcp") -> None:
    """`gitckpt hook KIND [--host NAME] [--cli]` after stdin was read (`raw`), in this
    process: the outcome to stdout, a log line to stderr and the log file; exit 0."""
    outcome = run(host_name, kind, raw, hook_folder(host_name), voice,
                  os.environ.get("GITCKPT_TOOL_PREFIX", ""))
    emit(outcome.stdout, outcome.log and f"hook {host_name} {kind}: {outcome.log}")
    sys.exit(0)
