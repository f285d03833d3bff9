"""JSON with comments, as Gemini CLI reads its settings.json: comments blanked for parsing, and
one top-level member replaced in the original text, so every comment outside it is kept."""

from __future__ import annotations

import json
from typing import Any

from gitckpt.core import json_input


def blank_comments(text: str) -> str:
    """`text` with each `//` and `/* */` comment outside a string replaced by spaces (its
    newlines kept): the same length, so an offset in it is an offset in `text`."""
    out = list(text)
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = _string_end(text, i)
            continue
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            out[i:end] = " " * (end - i)
            i = end
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out[i:end] = ["\n" if ch == "\n" else " " for ch in text[i:end]]
            i = end
            continue
        i += 1
    return "".join(out)


def has_comments(text: str) -> bool:
    return blank_comments(text) != text


def replace_member(text: str, key: str, value: Any) -> str:
    """`text` (a JSON object, comments allowed) with its top-level member `key` set to
    `value`: the old value's text replaced, or the member added last. Everything outside
    that value (comments, formatting, other members) is kept as written."""
    blank = blank_comments(text)
    members, close = _members(blank)
    shown = json.dumps(value, indent=2, ensure_ascii=False)
    for name, start, end in members:
        if name == key:
            indent = _indent_at(blank, start)
            return text[:start] + shown.replace("\n", "\n" + indent) + text[end:]
    inner = "  "
    addition = f'{json.dumps(key)}: {shown.replace(chr(10), chr(10) + inner)}'
    if members:  # after the last member's value, with its comma
        last_end = members[-1][2]
        return text[:last_end] + f",\n{inner}{addition}" + text[last_end:]
    return text[:close] + f"\n{inner}{addition}\n" + text[close:]


def _string_end(text: str, i: int) -> int:
    """The index after the JSON string starting at `text[i]` (a quote)."""
    j = i + 1
    while j < len(text):
        if text[j] == "\\":
            j += 2
            continue
        if text[j] == '"':
            return j + 1
        j += 1
    return len(text)


def _skip(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\r\n":
        i += 1
    return i


def _value_end(text: str, i: int) -> int:
    """The index after the JSON value starting at `text[i]`."""
    if text[i] == '"':
        return _string_end(text, i)
    if text[i] in "{[":
        depth = 0
        while i < len(text):
            c = text[i]
            if c == '"':
                i = _string_end(text, i)
                continue
            if c in "{[":
                depth += 1
            elif c in "}]":
                depth -= 1
                if depth == 0:
                    return i + 1
            i += 1
        raise ValueError("an object or list that does not end")
    j = i
    while j < len(text) and text[j] not in ",}] \t\r\n":
        j += 1
    return j


def _members(blank: str) -> tuple[list[tuple[str, int, int]], int]:
    """The top-level members of the object in `blank` as (key, value start, value end), and
    the index of its closing brace."""
    i = _skip(blank, 0)
    if i >= len(blank) or blank[i] != "{":
        raise ValueError("not a JSON object")
    i = _skip(blank, i + 1)
    out: list[tuple[str, int, int]] = []
    while i < len(blank) and blank[i] != "}":
        end = _string_end(blank, i)
        key = json_input.loads(blank[i:end])
        i = _skip(blank, end)
        if blank[i] != ":":
            raise ValueError("a member without a colon")
        start = _skip(blank, i + 1)
        stop = _value_end(blank, start)
        out.append((key, start, stop))
        i = _skip(blank, stop)
        if i < len(blank) and blank[i] == ",":
            i = _skip(blank, i + 1)
    if i >= len(blank):
        raise ValueError("an object that does not end")
    return out, i


def _indent_at(text: str, i: int) -> str:
    """The indentation of the line holding `text[i]`."""
    line = text[text.rfind("\n", 0, i) + 1:i]
    return line[:len(line) - len(line.lstrip())]
