"""JSON read back from a store, a package, a remote or another program, parsed with a size and
a nesting limit: the one `json.loads` for data gitckpt did not just produce itself."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

#: Levels of arrays and objects: gitckpt's own JSON nests four or five deep; far more than
#: that was crafted (and a few thousand exhaust the recursion of any code that walks it).
MAX_DEPTH = 64
#: Bytes of one document unless the caller says otherwise: a note of a save that touched a
#: million paths stays below it.
MAX_BYTES = 32 * 1024 * 1024


class JsonRefused(ValueError):
    """A document that is too large or nested too deep. A ValueError, so the callers that
    treat unreadable JSON as damaged treat it the same way; `str()` says which limit."""


def loads(text: str | bytes | bytearray, *, max_bytes: int = MAX_BYTES,
          max_depth: int = MAX_DEPTH, **options: Any) -> Any:
    """`json.loads(text, **options)`, refused with JsonRefused when `text` is longer than
    `max_bytes` (characters of a str) or nests arrays and objects deeper than `max_depth`;
    other malformed JSON raises json's own ValueError, as before."""
    if len(text) > max_bytes:
        raise JsonRefused(f"it is {len(text):,} bytes, more than the {max_bytes:,} it may hold")
    try:
        value = json.loads(text, **options)
    except RecursionError:
        # json's scanner stops itself at Python's recursion limit: far deeper than ours
        raise JsonRefused(f"it is nested more than {max_depth} levels deep") from None
    if depth(value, max_depth) > max_depth:
        raise JsonRefused(f"it is nested more than {max_depth} levels deep")
    return value


def depth(value: Any, stop: int = MAX_DEPTH) -> int:
    """How many levels of lists and dicts `value` nests (0 for a scalar), counted without
    recursion; the count stops just past `stop`."""
    deepest, todo = 0, [(value, 1)]
    while todo:
        item, level = todo.pop()
        children: Iterable[Any]
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        if level > stop:
            return level
        todo.extend((child, level + 1) for child in children
                    if isinstance(child, dict | list))
    return deepest
