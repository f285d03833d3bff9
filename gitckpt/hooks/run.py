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
import sys
import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from gitckpt.core import hints, json_input
from gitckpt.core.record import dataclass
from gitckpt.hooks import EVENTS
from gitckpt.hooks.hosts import HOSTS, Event, Host
from gitckpt.hooks.relay import emit, hook_folder

if TYPE_CHECKING:
    from gitckpt.service.events import Unsaved

__all__ = ["EVENTS", "main", "run", "serve"]

#: A hook gives up on a busy store after this long: the change is then the next boundary's.
LOCK_WAIT = 1.0


@dataclass(frozen=True)
class Outcome:
    """What one hook run did: `stdout` for the host, `log` a line for the log file."""

    stdout: str = ""
    log: str = ""


def run(host_name: str, kind: str, raw: str, here: str, voice: str = hints.MCP) -> Outcome:
    """One hook event (`here`: the hook's own working folder; `voice`: whether its texts name
    tool calls or CLI commands). Never raises: any failure is the host's empty answer and a
    log line."""
    outcome = _run(host_name, kind, raw, here, voice)
    host = HOSTS.get(host_name)
    if not outcome.stdout and host is not None:
        return Outcome(host.nothing(), outcome.log)
    return outcome


def _run(host_name: str, kind: str, raw: str, here: str, voice: str) -> Outcome:
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
        from gitckpt.service import api as service

        with service.one_call(event.cwd, boundary=False):  # the workspace opened once
            return _ACTIONS[kind](host, event, event.cwd)
    except Exception as e:  # the host's session goes on whatever happened here
        from gitckpt.core.errors import GitckptError

        if isinstance(e, GitckptError):
            return Outcome(log=f"{e.message}{f' ({e.hint})' if e.hint else ''}")
        if isinstance(e, OSError):  # a read-only or vanished store or workspace
            return Outcome(log=f"cannot use the store or the workspace: {e}")
        from gitckpt.store.logs import write_traceback

        where = write_traceback(f"--- gitckpt hook {host_name} {kind}")
        return Outcome(log=f"internal error ({type(e).__name__}: {e}); details: {where}")


def _session_start(host: Host, event: Event, cwd: str) -> Outcome:
    from gitckpt.service import events

    start = events.session_start(cwd, compacted=event.source == "compact", voice=event.voice,
                                 session=event.session, source=event.source,
                                 transcript=event.transcript, host=host.name)
    if start is None:
        return Outcome(log=f"no active task at {cwd}")
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


def _post_tool(host: Host, event: Event, cwd: str) -> Outcome:
    from gitckpt.service import events

    if not host.changes_files(event.tool):
        return Outcome(log=f"{event.tool} does not change files; nothing done")
    tool = {"name": event.tool or "?", "host": host.name}
    if event.session:
        tool["session"] = event.session
    if event.transcript:  # remembered for the step's usage; not kept in the drift
        tool["transcript"] = event.transcript
    if event.command:  # redacted and cut where a drift is written (Timeline.record_drift)
        tool["command"] = event.command
    start = time.monotonic()
    d = events.tool_ran(cwd, tool, lock_timeout=LOCK_WAIT)
    if d is None:
        return Outcome(log=f"no active task at {cwd}")
    took = f"{(time.monotonic() - start) * 1000:.0f} ms"
    if not d.recorded:
        return Outcome(log=f"{event.tool}: no files changed ({took})")
    return Outcome(host.post_tool_output(),
                   f"{event.tool}: drift {d.commit[:7]}, {len(d.changes.paths())} paths ({took})")


def _prompt(host: Host, event: Event, cwd: str) -> Outcome:
    from gitckpt.service import events

    if not event.prompt:
        return Outcome(log="the host's input holds no prompt; nothing done")
    kept = events.prompted(cwd, event.prompt, session=event.session, host=host.name,
                           model=event.model, transcript=event.transcript)
    if kept is None:
        return Outcome(log=f"no active task at {cwd}")
    return Outcome(host.prompt_output(), f"prompt {kept['id']} kept ({len(kept['text'])} chars)")


def _unsaved_line(u: Unsaved, voice: str) -> str:
    files = f"{u.changed} file{'' if u.changed == 1 else 's'}"
    how = hints.call("save", title=hints.BLANK, conclusion=hints.BLANK,
                     next=hints.BLANK).spell(voice)  # a tool as the host names it, or a command
    return (f"gitckpt: {files} changed since step {u.step} ({u.title!r}) and are not saved "
            f"as a step; if that work is finished, save it with {how}.")


def _pre_compact(host: Host, event: Event, cwd: str) -> Outcome:
    from gitckpt.service import events

    r = events.compacting(cwd, lock_timeout=LOCK_WAIT)
    if r is None:
        return Outcome(log=f"no active task at {cwd}")
    u = r.unsaved
    if not u.changed:
        return Outcome(log=f"pre-compact: nothing unsaved since step {u.step}")
    files = f"{u.changed} file{'' if u.changed == 1 else 's'}"
    if r.said:  # kept for the session after the compaction all the same
        return Outcome(log=f"pre-compact: {files} unsaved, already said for this state")
    return Outcome(host.remind("pre-compact", _unsaved_line(u, event.voice)),
                   f"pre-compact: {files} unsaved")


def _stop(host: Host, event: Event, cwd: str) -> Outcome:
    from gitckpt.service import events

    s = events.stopping(cwd, lock_timeout=LOCK_WAIT, again=event.stop_active or event.aborted)
    if s is None:
        return Outcome(log=f"no active task at {cwd}")
    u = s.unsaved
    files = f"{u.changed} file{'' if u.changed == 1 else 's'}"
    if not u.changed:
        return Outcome(log=f"stop: nothing unsaved since step {u.step}")
    if event.aborted:
        return Outcome(log=f"stop: the user stopped the agent; {files} unsaved, no reminder")
    if event.stop_active:
        return Outcome(log="stop: the agent is already continuing for a hook; not again")
    if s.said:
        return Outcome(log=f"stop: {files} unsaved, already said for this state")
    return Outcome(host.remind("stop", _unsaved_line(u, event.voice)),
                   f"stop: reminded, {files} unsaved")


_ACTIONS = {"session-start": _session_start, "prompt": _prompt, "post-tool": _post_tool,
            "pre-compact": _pre_compact, "stop": _stop}


def serve(request: dict) -> dict:
    """A relayed hook (gitckpt.hook_relay), run in a long-lived gitckpt process."""
    host, kind = request.get("host"), request.get("kind")
    raw, here = request.get("raw"), request.get("here")
    voice = request.get("voice", hints.MCP)
    if host not in HOSTS or kind not in _ACTIONS or not isinstance(raw, str) \
            or not isinstance(here, str) or voice not in (hints.MCP, hints.CLI):
        return {"refused": "not a hook request"}
    outcome = run(host, kind, raw, here, voice)
    return {"stdout": outcome.stdout, "log": outcome.log}


def start_relay(commands: Callable[[dict], dict] | None = None):
    """The hooks' relay in a long-lived gitckpt (`mcp`, `watch`): this user's hooks run
    there, warm, and so do the CLI commands `commands` serves (a request with "cli"; the
    CLI's side, gitckpt/cli/relayed.py). None where it cannot listen (the hooks then run in
    their own process)."""
    import logging

    from gitckpt.hooks.relay_server import Relay

    def either(request: dict) -> dict:
        if "cli" in request:
            return commands(request) if commands is not None else {"refused": "no commands"}
        return serve(request)

    relay = Relay(either)
    try:
        if relay.start():
            logging.getLogger("gitckpt").info("hook relay at %s", relay.path)
            return relay
    except Exception:
        logging.getLogger("gitckpt").exception("cannot start the hook relay")
    return None


def read_stdin() -> str:
    """The host's input; "" when stdin is closed or unreadable (the hook then says so)."""
    stream = getattr(sys.stdin, "buffer", None)
    try:
        return stream.read().decode("utf-8", "replace") if stream is not None else ""
    except (OSError, ValueError):
        return ""


def main(host_name: str, kind: str, raw: str, voice: str = "mcp") -> None:
    """`gitckpt hook KIND [--host NAME] [--cli]` after stdin was read (`raw`), in this
    process: the outcome to stdout, a log line to stderr and the log file; exit 0."""
    outcome = run(host_name, kind, raw, hook_folder(host_name), voice)
    emit(outcome.stdout, outcome.log and f"hook {host_name} {kind}: {outcome.log}")
    sys.exit(0)
