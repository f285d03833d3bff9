"""Size bounds of what an agent or user writes into a note, each refused with a clear error."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from gitckpt.core.errors import InvalidArgument

if TYPE_CHECKING:
    from gitckpt.engine.notes import Note

TITLE = 300  # characters: a step title, a task name, a plan item
TEXT = 8_000  # characters: conclusion, next, description, goal, constraints
ITEM = 2_000  # characters: one entry of a list (verified, open questions, decisions)
ITEMS = 50  # entries of one list
PLAN = 100  # plan items
PATTERNS = 100  # exclude patterns
NOTE = 64 * 1024  # bytes of everything written by hand into one note, as JSON
COMMAND = 2_000  # characters of the shell command a drift's note keeps (redacted, then cut)
PROMPT = 4_000  # characters of a user's prompt kept (redacted, then cut)
PROMPTS = 50  # prompts a step's note holds (the newest since the step before)
TRANSCRIPT = 512 << 10  # bytes of one session's transcript a step keeps (the newest)
#: Control characters no hand-written text of a note keeps (a save strips them; tab and
#: newline stay): a note from elsewhere that holds one was not written by a save.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")

_LONG = {"title": TITLE, "name": TITLE}


def check_text(field: str, value: str, limit: int | None = None) -> None:
    """InvalidArgument if `value` is longer than the limit of `field`."""
    limit = limit or _LONG.get(field, TEXT)
    if len(value) > limit:
        raise InvalidArgument(f"The {field} is {len(value):,} characters long; the limit is "
                              f"{limit:,}.", _hint(field))


def check_list(field: str, items: list[str], *, count: int = ITEMS, each: int = ITEM) -> None:
    """InvalidArgument if `items` has too many entries or one entry is too long."""
    if len(items) > count:
        raise InvalidArgument(f"{field} has {len(items):,} entries; the limit is {count}.",
                              _hint(field))
    for item in items:
        if len(item) > each:
            raise InvalidArgument(f"An entry of {field} is {len(item):,} characters long; the "
                                  f"limit is {each:,}.", _hint(field))


def check_note(fields: dict[str, object]) -> None:
    """InvalidArgument if the hand-written fields of a note add up to more than NOTE bytes."""
    size = len(json.dumps(fields, ensure_ascii=False).encode("utf-8", "surrogatepass"))
    if size > NOTE:
        raise InvalidArgument(f"This step's text adds up to {size:,} bytes; a note holds at "
                              f"most {NOTE:,}.", "Keep a step's note to what the next session "
                              "needs; long output belongs in a file of the workspace.")


def check_written(note: Note) -> None:
    """InvalidArgument if a note made elsewhere (a package, a remote) holds more than a save
    here would write, field by field, or a control character in a text a save cleans: what a
    save here would refuse or never write, a task from elsewhere cannot bring (search, the
    terminal and the next session read it as they read a local one)."""
    texts: list[tuple[str, str]] = []
    for key in ("title", "conclusion", "next", "description", "name", "goal", "constraints"):
        value = getattr(note, key) or ""
        check_text(key, value)
        texts.append((key, value))
    for key in ("verified", "open_questions", "decisions", "gotchas", "answered", "dropped",
                "then"):
        items = getattr(note, key)
        check_list(key, items)
        texts += [(key, v) for v in items]
    check_list("plan", [p.item for p in note.plan], count=PLAN, each=TITLE)
    texts += [("plan", p.item) for p in note.plan]
    check_list("exclude", note.exclude or [], count=PATTERNS)
    commands = [str(c.get("command", "")) for c in note.commands]
    check_list("commands", commands, each=COMMAND)
    check_list("files", [str(f.get("path", "")) + str(f.get("note", "")) for f in note.files])
    texts += [("commands", c) for c in commands]
    texts += [("files", str(f.get("note", ""))) for f in note.files]
    tool = note.tool or {}
    check_text("tool command", str(tool.get("command") or ""), COMMAND)
    check_text("tool name", str(tool.get("name") or ""), TITLE)
    texts += [("tool command", str(tool.get("command") or ""))]
    prompts = [str(p.get("text", "")) if isinstance(p, dict) else "" for p in note.prompts]
    check_list("prompts", prompts, count=PROMPTS, each=PROMPT)
    texts += [("prompts", t) for t in prompts]
    check_list("sessions", note.sessions, count=PROMPTS, each=TITLE)
    check_list("models", note.models, count=PROMPTS, each=TITLE)
    for key, text in texts:
        if _CONTROL.search(text):
            raise InvalidArgument(f"The {key} holds a control character, which no save "
                                  "writes.", "Fix the note where the task was made.")


def _hint(field: str) -> str:
    return (f"Shorten the {field}: a note is read by the next session, so keep what it needs; "
            "put long output in a file of the workspace.")
