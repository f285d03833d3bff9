"""The user's prompts a host's hook heard since the task's newest step: kept in the store's
state, redacted and capped, named by the drifts that follow (their tool's `prompt`), and
taken into the next step's note (`prompts`, `sessions`), which `why` reads back."""

from __future__ import annotations

import json
from typing import Any

from gitckpt.core import json_input, limits
from gitckpt.core.errors import GitckptError
from gitckpt.core.ids import TaskId
from gitckpt.core.objects import sha1
from gitckpt.safety.redact import clean, redact
from gitckpt.store.base import Store

#: The longest prompt kept (redacted first, then cut: a cut can hide a secret from the rules).
CHARS = limits.PROMPT
#: The prompts kept between two steps (the newest); a step's note holds at most these.
KEEP = limits.PROMPTS
#: The lock of the hooks' small memories in the state folder (this file's, the reminders'):
#: not the store's lock, which a watcher's scan may hold for long. A save takes it inside
#: the store's lock; hooks take it alone.
MEMORY_LOCK = "hook-memory.lock"
MEMORY_WAIT = 2.0  # seconds; its holders read and write a few bytes


def _file(tid: TaskId) -> str:
    return f"prompts-{tid}.json"


def pending(store: Store, tid: TaskId) -> list[dict[str, Any]]:
    """The prompts heard since the newest step, oldest first; a damaged file reads as none."""
    try:
        data = json_input.loads(store.state.read(_file(tid)) or b"[]")
    except ValueError:
        return []
    return [p for p in data if isinstance(p, dict) and isinstance(p.get("id"), str)
            and isinstance(p.get("text"), str)] if isinstance(data, list) else []


def add(store: Store, tid: TaskId, text: str, *, session: str | None, host: str,
        at: str, model: str | None = None) -> dict[str, Any]:
    """Keep a prompt (redacted, then cut to CHARS) for the drifts and the step that follow;
    its record, whose `id` they name."""
    def tidy(value: str) -> str:  # as every field: control characters out, then redacted
        return redact(clean(value))[0]

    kept_text = tidy(text)[:CHARS]
    who = tidy(session)[:200] if session else None
    pid = sha1(f"{who}\0{at}\0{kept_text}".encode()).hexdigest()[:12]
    record: dict[str, Any] = {"id": pid, "session": who, "host": host, "at": at,
                              "text": kept_text,
                              **({"model": tidy(model)[:200]} if model else {})}
    with store.state.locked(MEMORY_LOCK, MEMORY_WAIT):
        kept = [*pending(store, tid), record][-KEEP:]
        store.state.write(_file(tid), json.dumps(kept).encode())
        last = _last(store, tid)
        last[who or ""] = pid
        store.state.write(_last_file(tid), json.dumps(last).encode())
    return record


def _last_file(tid: TaskId) -> str:
    return f"prompt-last-{tid}.json"


def _last(store: Store, tid: TaskId) -> dict[str, str]:
    """The newest prompt's id of each session ("" for none), kept past the save that took
    the prompt: a tool call after a save in the same turn still follows that prompt."""
    try:
        data = json_input.loads(store.state.read(_last_file(tid)) or b"{}")
    except ValueError:
        return {}
    return {k: v for k, v in data.items() if isinstance(v, str)} \
        if isinstance(data, dict) else {}


def latest(store: Store, tid: TaskId, session: str | None) -> str | None:
    """The id of the newest prompt of `session` (of any session where it is None), saved
    into a step already or not."""
    for p in reversed(pending(store, tid)):
        if session is None or p.get("session") in (session, None):
            return str(p["id"])
    last = _last(store, tid)
    if session is None or not last:
        return None
    # keys are kept redacted; a session id that is one already (a host's uuid) needs no rules
    return last.get(session) or last.get(redact(clean(session))[0][:200]) or last.get("")


def taken(store: Store, tid: TaskId, records: list[dict[str, Any]]) -> None:
    """The prompts a step's note now holds leave the state (a prompt heard meanwhile stays
    for the next step). The caller holds MEMORY_LOCK."""
    ids = {p["id"] for p in records}
    rest = [p for p in pending(store, tid) if p["id"] not in ids]
    if rest:
        store.state.write(_file(tid), json.dumps(rest).encode())
    else:
        store.state.remove(_file(tid))


def taken_safely(store: Store, tid: TaskId, records: list[dict[str, Any]]) -> None:
    """`taken`, after a save's commit: a memory that is busy or cannot be written leaves the
    prompts for the next step too (said in the log), never a failed save that was made."""
    import logging

    try:
        with store.state.locked(MEMORY_LOCK, MEMORY_WAIT):
            taken(store, tid, records)
    except (OSError, GitckptError) as e:
        logging.getLogger("gitckpt").warning(
            "the step holds its prompts, but they stay pending too: %s", e)
