"""Size bounds of what an agent or user writes into a note, each refused with a clear error."""

from __future__ import annotations

import json
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
    here would accept."""
    for key in ("title", "conclusion", "next", "description"):
        check_text(key, getattr(note, key))
    for key in ("verified", "open_questions", "decisions"):
        check_list(key, getattr(note, key))
    check_list("plan", [p.item for p in note.plan], count=PLAN, each=TITLE)


def _hint(field: str) -> str:
    return (f"Shorten the {field}: a note is read by the next session, so keep what it needs; "
            "put long output in a file of the workspace.")
