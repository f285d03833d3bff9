"""Requests read back through their declaration (core/request.py): from JSON (an MCP tool call,
a message between processes) and the CLI's text forms of the structured values (`PATH=NOTE`,
`ITEM=STATUS`). Strict where a mistake loses work, forgiving where it cannot: an unknown
argument is refused with the closest real one (a misspelled `conclusion` must not save a step
without it), a boolean must be a boolean (`"yes"` must not close a task), a step number may be
an integer where a text is expected. Each refusal is one sentence and an example."""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar, cast

from gitckpt.core.errors import InvalidArgument
from gitckpt.core.inputs import FileNote, PlanEntry, PlanUpdate
from gitckpt.core.request import UNSET, Kind, Param, Request, params

Q = TypeVar("Q", bound=Request[Any])
Front = Literal["mcp", "wire"]

_EXAMPLE = {"string": '"text"', "boolean": "true", "integer": "3", "number": "1.5",
            "array": '["a", "b"]', "object": "{...}"}
_VALUE: dict[str, object] = {"string": "text", "boolean": True, "integer": 3, "number": 1.5}
_STATUSES = ("pending", "in_progress", "done", "blocked")


def decode(cls: type[Q], data: object, *, front: Front = "wire", name: str = "",
           shared: Sequence[str] = ()) -> Q:
    """The request `cls` from JSON `data`. `front` "mcp" takes only the inputs the tool
    exposes, and its own defaults for the rest; `name` is what errors call the caller (the
    tool); `shared` names the arguments the caller takes itself (MCP's `root`), which
    `data` no longer holds."""
    name = name or cls.tool or cls.op
    if not isinstance(data, Mapping):
        raise InvalidArgument(f"{name} takes an object of arguments, not "
                              f"{json.dumps(data)[:40]}.", f"For example {name}({{...}}).")
    shown = [p for p in params(cls) if front != "mcp" or p.spec.mcp]
    known = {p.name: p for p in shown}
    for key in data:
        if key not in known:
            raise _unknown(name, str(key), [*known, *shared])
    values: dict[str, Any] = {}
    for p in params(cls):
        if p.name in data and p.name in known:
            values[p.name] = _value(name, p.name, p.kind, data[p.name], p)
        elif front == "mcp" and p.spec.mcp_default is not UNSET:
            values[p.name] = p.spec.mcp_default
        elif p.required:
            raise InvalidArgument(f"{name} needs {p.name}.",
                                  f"For example {name}({_example(p)}).")
    request = cls(**values)
    broken = request.usage()
    if broken is not None:
        raise InvalidArgument(broken.format(**{p.name: p.name for p in params(cls)}),
                              f"See {name}'s arguments.")
    return request


def _unknown(name: str, key: str, known: list[str]) -> InvalidArgument:
    close = difflib.get_close_matches(key, known, 1, 0.5)
    guess = f' Did you mean "{close[0]}"?' if close else ""
    return InvalidArgument(f'{name} has no argument "{key}".{guess}',
                           f"Its arguments are {', '.join(known)}.")


def _example(p: Param) -> str:
    if p.spec.example is not None:
        return f"{p.name}={p.spec.example}"
    if p.kind.record is not None or (p.kind.items is not None
                                     and p.kind.items.record is not None):
        record = p.kind.record or cast("Kind", p.kind.items).record
        one = {q.name: _VALUE.get(q.kind.json) for q in params(cast("type", record))
               if q.required}
        shown = json.dumps(one if p.kind.record is not None else [one])
        return f"{p.name}={shown}"
    if p.kind.values:
        return f'{p.name}="{p.kind.values[0]}"'
    return f"{p.name}={_EXAMPLE.get(p.kind.json, '...')}"


def _value(name: str, where: str, kind: Kind, value: Any, p: Param) -> Any:
    """`value` as `kind` takes it, or InvalidArgument naming `where` (`plan.0.status`)."""
    if value is None:
        if kind.nullable:
            return None
        raise _wrong(name, where, kind, value, p)
    if kind.alts:
        for alt in kind.alts:
            try:
                return _value(name, where, alt, value, p)
            except InvalidArgument:
                continue
        raise _wrong(name, where, kind.alts[0], value, p)
    if kind.json == "array":
        if not isinstance(value, list | tuple):
            raise _wrong(name, where, kind, value, p)
        items = cast("Kind", kind.items)
        return tuple(_value(name, f"{where}.{i}", items, v, p) for i, v in enumerate(value))
    if kind.record is not None:
        return _record(name, where, kind.record, value, p)
    if kind.json == "object":
        if not isinstance(value, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise _wrong(name, where, kind, value, p)
        return dict(value)
    return _scalar(name, where, kind, value, p)


def _scalar(name: str, where: str, kind: Kind, value: Any, p: Param) -> Any:
    if kind.json == "string":
        if isinstance(value, int) and not isinstance(value, bool) and not kind.values:
            value = str(value)  # target=1 is step 1
        if not isinstance(value, str):
            raise _wrong(name, where, kind, value, p)
        if kind.values and value not in kind.values:
            raise InvalidArgument(f"{where} of {name} must be one of "
                                  f"{', '.join(kind.values)}, not {json.dumps(value)[:40]}.",
                                  f"For example {name}({_example(p)}).")
        return value
    if kind.json == "integer" and isinstance(value, str) and value.strip().isdigit():
        value = int(value)  # step="3" is step 3
    wanted = {"integer": int, "number": int | float, "boolean": bool}.get(kind.json)
    if wanted is None or not isinstance(value, wanted) \
            or (kind.json != "boolean" and isinstance(value, bool)):
        raise _wrong(name, where, kind, value, p)
    if kind.json == "integer":
        _bounds(name, where, value, p)
    return value


def _record(name: str, where: str, cls: type, value: Any, top: Param) -> Any:
    if not isinstance(value, Mapping):
        raise _wrong(name, where, Kind("object"), value, top)
    fields = {q.name: q for q in params(cls)}
    for q in fields.values():
        if q.required and q.name not in value:
            raise InvalidArgument(f"{name} needs {where}.{q.name}.",
                                  f"For example {name}({_example(top)}).")
    for key in value:
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), 1, 0.5)
            guess = f' Did you mean "{close[0]}"?' if close else ""
            raise InvalidArgument(f'{where} of {name} has no field "{key}".{guess}',
                                  f"For example {name}({_example(top)}).")
    out = {q.name: _value(name, f"{where}.{q.name}", q.kind, value[q.name], top)
           for q in fields.values() if q.name in value}
    return cls(**out)


def _bounds(name: str, where: str, value: int, p: Param) -> None:
    low, high = p.spec.minimum, p.spec.maximum
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"at least {low}" if high is None else f"from {low} to {high}" \
            if low is not None else f"at most {high}"
        raise InvalidArgument(f"{where} of {name} must be {span}, not {value}.",
                              f"For example {name}({where}={low if low is not None else 1}).")


def _wrong(name: str, where: str, kind: Kind, value: object, p: Param) -> InvalidArgument:
    want = kind.json  # JSON's own names: what a tool call's arguments are written in
    article = "an" if want[0] in "aeiou" else "a"
    try:
        shown = json.dumps(value)[:40]
    except (TypeError, ValueError):
        shown = type(value).__name__
    return InvalidArgument(f"{where} takes {article} {want}, not {shown}.",
                           f"For example {name}({_example(p)}).")


# -- the CLI's text forms of the structured values ------------------------------------------


def file_note(text: str) -> FileNote:
    """`PATH[=NOTE]`: a file that matters, and why."""
    path, _, note = text.partition("=")
    return FileNote(path, note)


def plan_entry(text: str) -> PlanEntry:
    """`ITEM[=STATUS]` (status default pending); a leading `+` says the item is new, which
    every item of a new task is."""
    item, status = _plan_text(text[1:] if text.startswith("+") else text)
    return PlanEntry(item, status)


def plan_update(text: str) -> PlanUpdate:
    """`[+]ITEM[=STATUS]`: an item updated by its text, or with `+` a new one."""
    new = text.startswith("+")
    item, status = _plan_text(text[1:] if new else text)
    return PlanUpdate(item, status, new)


def _plan_text(text: str) -> tuple[str, Any]:
    """(item, status) of `ITEM[=STATUS]`; a word after the last `=` that is no status is a
    typo, refused (a plan item may hold `=` itself: `x=1 holds`)."""
    text = " ".join(text.split())
    item, sep, status = text.rpartition("=")
    status = status.strip()
    if sep and status in _STATUSES:
        return item.strip(), status
    if sep and re.fullmatch(r"[a-z_]+", status):
        raise InvalidArgument(f"Unknown plan status {status!r} for {item.strip()!r}.",
                              f"Use one of: {', '.join(_STATUSES)}.")
    return text.strip(), "pending"


#: Each record class's text form on the command line.
TEXT_FORMS: dict[type, Callable[[str], object]] = {
    FileNote: file_note, PlanEntry: plan_entry, PlanUpdate: plan_update}
