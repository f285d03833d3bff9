"""What the hosts' hooks ask of the service: one call per hook event. Each answers None in a
folder without an active task (a host runs its hooks in any folder) and creates nothing
there; the small memories the hooks keep between events (what a stop reminder last named,
what a compaction left unsaved) live in the store's state folder, written here."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from gitckpt.core import json_input
from gitckpt.core.errors import GitckptError
from gitckpt.core.ids import ObjectId
from gitckpt.core.ops.events import (
    CompactingRequest,
    PromptRequest,
    SessionStartRequest,
    StoppingRequest,
    ToolRanRequest,
)
from gitckpt.core.shape import Shaped
from gitckpt.engine import prompts, sessions
from gitckpt.engine.prompts import MEMORY_LOCK, MEMORY_WAIT
from gitckpt.engine.records import DriftResult
from gitckpt.service import api
from gitckpt.service.workspace import Workspace

if TYPE_CHECKING:
    from gitckpt.service.results import Pending
    from gitckpt.store.state import StateDir

#: State-file names: the last tip a stop reminder named, the last one a pre-compact reminder
#: named, and what a compaction left unsaved, kept for the session that follows it (PreCompact
#: has no channel to the agent; SessionStart has).
REMINDED = "hook-reminded"
COMPACT_REMINDED = "hook-compact-reminded"
AFTER_COMPACT = "hook-after-compact"
#: The last handoff a session-start hook gave: when, and to which session (its lock, the
#: hooks' memories' own: engine/prompts.py).
HANDED = "hook-handed"
#: Seconds within which a second session start of the same session (or of an unknown one) is
#: the same moment heard twice: a host that runs two recipes (Cursor, Copilot CLI and Devin
#: also run the hooks in `.claude/settings*.json`) fires both for one start.
TWICE_WINDOW = 5.0


@dataclass(frozen=True)
class Unsaved(Shaped):
    """Files changed since the newest step and not saved as a step."""

    task: str
    step: int  # the newest step
    title: str  # its title
    changed: int  # files that differ from it
    tip: ObjectId  # the commit that holds the workspace now


@dataclass(frozen=True)
class Start(Shaped):
    """A session starts in a workspace with an active task: the handoff, and (after a
    compaction) what the compaction found unsaved."""

    task: str
    text: str  # the handoff, as ckpt_resume gives it
    compacted: Unsaved | None = None
    #: seconds since another hook gave this session its handoff (the same start heard twice,
    #: see TWICE_WINDOW), or None: the handoff is then not given again
    twice: float | None = None


@dataclass(frozen=True)
class Reminder(Shaped):
    """The agent is about to stop, or its context to be compacted: what is unsaved, and
    whether the reminder for exactly this state was given already (then it is not given
    again)."""

    unsaved: Unsaved
    said: bool


def _heard(ws: Workspace, session: str | None, transcript: str | None, host: str) -> None:
    """Remember a session's transcript for the next step's usage (engine/sessions.py); a
    memory that is busy or cannot be written costs the step its usage, never the hook."""
    if not (session and transcript):
        return
    try:
        sessions.heard(ws.store, ws.timeline.resolve(None), session, transcript, host)
    except (OSError, GitckptError) as e:
        logging.getLogger("gitckpt").info("the session's transcript is not remembered: %s", e)


def session_start(ws: Workspace, r: SessionStartRequest,
                  clock: Callable[[], float] = time.time) -> Start | None:
    """The handoff for a session that starts (`compacted`: after a compaction, which gets
    the unsaved files the compaction found), naming tool calls or (`voice` "cli") commands.
    The compaction's memory is used once. A second start of the same `session` and `source`
    (startup, resume, clear, compact; where either names none, any) within TWICE_WINDOW
    seconds, through another host's recipe, is the same start heard twice: `twice` says so,
    and the caller gives no second handoff. A store whose memory cannot be written still
    hands off."""
    if ws.active() is None:
        return None
    _heard(ws, r.session, r.transcript, r.host)
    from gitckpt.engine import resume as resuming  # a drift's hook does without them
    from gitckpt.engine.handoff import handoff_text

    # the handoff as api.resume words it, without its result object (a hook starts cold)
    facts = resuming.gather(ws.timeline, None, r.voice)
    task, text = facts.info.id, handoff_text(facts, r.voice)
    state = ws.store.state
    me: dict[str, Any] = {"at": clock(), "session": r.session, "source": r.source,
                          "host": r.host}
    try:
        with state.locked(MEMORY_LOCK, MEMORY_WAIT):  # two hooks of one start: one hands off
            # the time is read under the lock: a hook that read it first but takes the lock
            # second would be "before" the other's handoff, and hand off again
            me["at"] = clock()
            last = _handed(state.read(HANDED))
            # (the same recipe twice is two starts: `claude -p --resume` run again at once)
            if last is not None and 0 <= me["at"] - last["at"] < TWICE_WINDOW \
                    and last["host"] != me["host"] \
                    and all(last[k] is None or me[k] is None or last[k] == me[k]
                            for k in ("session", "source")):
                return Start(task, text, twice=me["at"] - last["at"])
            state.write(HANDED, json.dumps(me).encode())
            kept = state.read(AFTER_COMPACT)
            if kept is not None:
                state.remove(AFTER_COMPACT)
    except (OSError, GitckptError):  # read-only or busy: the handoff all the same
        kept = None
    before = _unsaved(kept) if kept is not None and r.compacted else None
    return Start(task, text, before)


def _handed(data: bytes | None) -> dict[str, Any] | None:
    """The last handoff's memory ("at", "session", "source"), or None if it is not one."""
    try:
        d = json_input.loads(data.decode("utf-8")) if data is not None else None
        if not isinstance(d, dict):
            return None
        return {"at": float(d["at"]),
                **{k: d.get(k) if isinstance(d.get(k), str) else None
                   for k in ("session", "source", "host")}}
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def tool_ran(ws: Workspace, r: ToolRanRequest) -> DriftResult | None:
    """A tool that changes files has run: its changes as a drift attributed to `r.call`,
    and to the newest prompt of its session that a hook heard."""
    if ws.active() is None:
        return None
    _heard(ws, r.call.session, r.transcript, r.call.host)
    heard = prompts.latest(ws.store, ws.timeline.resolve(None), r.call.session)
    tool = replace(r.call, prompt=heard) if heard is not None else r.call
    return ws.timeline.capture("tool", None, tool=tool, lock_timeout=r.lock_wait)


def prompted(ws: Workspace, r: PromptRequest,
             clock: Callable[[], float] = time.time) -> dict[str, Any] | None:
    """The user submitted a prompt: kept (redacted, capped) for the drifts and the step that
    follow; its record, or None in a folder without an active task."""
    from gitckpt.engine.records import rfc3339

    if ws.active() is None:
        return None
    _heard(ws, r.session, r.transcript, r.host)
    return prompts.add(ws.store, ws.timeline.resolve(None), r.text, session=r.session,
                       host=r.host, at=rfc3339(clock()), model=r.model)


def compacting(ws: Workspace, r: CompactingRequest) -> Reminder | None:
    """The context is about to be compacted: the workspace captured, what is unsaved kept
    for the session that follows (when anything is), and whether a pre-compact reminder
    named this unsaved stretch already (the work since the newest step: each edit is a new
    state, and a reminder per state was a reminder per edit)."""
    if ws.active() is None:
        return None
    unsaved = _of(api.pending(ws, trigger="pre_compact", lock_timeout=r.lock_wait))
    if not unsaved.changed:
        return Reminder(unsaved, said=False)
    state = ws.store.state
    with state.locked(MEMORY_LOCK, MEMORY_WAIT):  # checked and set at once: one reminder
        state.write(AFTER_COMPACT, json.dumps(unsaved.to_dict()).encode())
        said = _said(state, COMPACT_REMINDED, unsaved)
    return Reminder(unsaved, said)


def stopping(ws: Workspace, r: StoppingRequest) -> Reminder | None:
    """The agent is about to stop: the workspace captured, and whether this unsaved stretch
    (the work since the newest step) was named by a reminder already. A reminder about to be
    given (`again` False: the agent is not already continuing for a hook) is remembered, so
    a stretch is named once, however many edits it grows by."""
    if ws.active() is None:
        return None
    unsaved = _of(api.pending(ws, trigger="stop", lock_timeout=r.lock_wait))
    if not unsaved.changed or r.again:
        return Reminder(unsaved, said=False)
    state = ws.store.state
    with state.locked(MEMORY_LOCK, MEMORY_WAIT):  # checked and set at once: one reminder
        said = _said(state, REMINDED, unsaved)
    return Reminder(unsaved, said)


def _said(state: StateDir, name: str, unsaved: Unsaved) -> bool:
    """Whether the reminder `name` was given since `unsaved`'s newest step already; it has
    from now on. The caller holds MEMORY_LOCK."""
    stretch = f"{unsaved.task}\0{unsaved.step}".encode()
    if state.read(name) == stretch:
        return True
    state.write(name, stretch)
    return False


def _of(p: Pending) -> Unsaved:
    return Unsaved(p.task, p.step, p.title, p.changed, p.tip)


def _unsaved(data: bytes) -> Unsaved | None:
    """The compaction's memory, or None if it is not one (an older gitckpt kept a line of
    text there)."""
    try:
        d = json_input.loads(data.decode("utf-8"))
        return Unsaved(str(d["task"]), int(d["step"]), str(d["title"]), int(d["changed"]),
                       ObjectId(str(d["tip"])))
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None


def commit_trailer(ws: Workspace) -> str | None:
    """The `Checkpoint:` trailer's value for a commit of the user's made now ("<task> step
    <n>": the active task's newest step), or None without an active task."""
    tid = ws.active()
    if tid is None:
        return None
    return f"{tid} step {ws.timeline.head(tid).n}"
