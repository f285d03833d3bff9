"""The user's prompts a host's hook heard since the task's newest step: kept in the store's
state, redacted and capped, named by the drifts that follow (their tool's `prompt`), and
taken into the next step's note (`prompts`, `sessions`), which `why` reads back."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from gitckpt.core import json_input
from gitckpt.core.ids import TaskId
from gitckpt.safety.redact import redact
from gitckpt.store.base import Store

#: The longest prompt kept (redacted first, then cut: a cut can hide a secret from the rules).
CHARS = 4000
#: The prompts kept between two steps (the newest); a step's note holds at most these.
KEEP = 50
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
    clean = redact(text)[0][:CHARS]
    record = {"id": hashlib.sha1(f"{session}\0{at}\0{clean}".encode()).hexdigest()[:12],
              "session": session, "host": host, "at": at, "text": clean,
              **({"model": model} if model else {})}
    with store.state.locked(MEMORY_LOCK, MEMORY_WAIT):
        kept = [*pending(store, tid), record][-KEEP:]
        store.state.write(_file(tid), json.dumps(kept).encode())
    return record


def latest(store: Store, tid: TaskId, session: str | None) -> str | None:
    """The id of the newest prompt of `session` (of any session where it is None)."""
    for p in reversed(pending(store, tid)):
        if session is None or p.get("session") in (session, None):
            return str(p["id"])
    return None


def taken(store: Store, tid: TaskId, records: list[dict[str, Any]]) -> None:
    """The prompts a step's note now holds leave the state (a prompt heard meanwhile stays
    for the next step). The caller holds MEMORY_LOCK."""
    ids = {p["id"] for p in records}
    rest = [p for p in pending(store, tid) if p["id"] not in ids]
    if rest:
        store.state.write(_file(tid), json.dumps(rest).encode())
    else:
        store.state.remove(_file(tid))
