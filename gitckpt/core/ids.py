"""Typed identifiers used at module boundaries: object ids, task ids, workspace paths."""

from __future__ import annotations

import os
import re
from typing import NewType

from gitckpt.core.errors import InvalidArgument
from gitckpt.core.hints import call

# A git object id: 40 lowercase hex digits (SHA-1).
ObjectId = NewType("ObjectId", str)

# Task ids are ref-name components: lowercase ASCII letters, digits and inner dashes. This is
# stricter than `git check-ref-format` on purpose: ids also name files and appear in shells.
_TASK_ID = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?")
_SLUG_MAX = 40


class TaskId(str):
    """A validated task id such as `refactor-auth-3f9a`."""

    def __new__(cls, value: str) -> TaskId:
        if not isinstance(value, str) or not _TASK_ID.fullmatch(value) or "--" in value:
            shown = value if not isinstance(value, str) or len(value) <= 80 else value[:80] + "..."
            raise InvalidArgument(
                f"Not a valid task id: {shown!r}.",
                "Task ids are lowercase letters, digits and single dashes, as {0} shows them.",
                [call("tasks")],
            )
        return super().__new__(cls, value)


def slugify(name: str) -> str:
    """A readable ASCII slug of a task name; empty when the name has no Latin letters or digits."""
    if name.isascii():  # unicodedata costs a hook or CLI start 3 ms; ASCII needs none of it
        ascii_name = name
    else:
        import unicodedata

        ascii_name = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_name.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > _SLUG_MAX:
            break
        slug = candidate
    if not slug and words:
        slug = words[0][:_SLUG_MAX]
    return slug


def new_task_id(name: str) -> TaskId:
    """A fresh id for a task named `name`: its slug plus a random 4-hex suffix (os.urandom,
    which is what `secrets` reads; importing `secrets` costs every process 4 ms)."""
    return TaskId(f"{slugify(name) or 'task'}-{os.urandom(2).hex()}")
