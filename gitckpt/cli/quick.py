"""`gitckpt resume` and `gitckpt save`, the commands an agent's shell runs most, parsed without
click: importing click and building every command costs a run about 15 ms of CPU, a tenth of
the whole.

Contract: a command line is taken here only when click would read it the same way, to the
same parameters, and run the same body (gitckpt/cli/invocation.py); anything else (help, a
usage error, an option form this parser does not know, a value that starts with `-`, `--`)
returns None and goes to click, which says what it says. tests/cli/test_quick.py holds the
two to that: the tables below equal click's commands, and any command line, generated, is
either declined or parsed exactly as click parses it. `_GITCKPT_CLICK=1` sends every command
line to click (the tests compare the two outputs byte for byte).
"""

from __future__ import annotations

import os
import sys
from typing import Any

#: The group's options before the command: option -> (parameter, takes a value).
GLOBAL = {"-C": ("root", True), "--json": ("as_json", False), "--color": ("color", True),
          "--no-pager": ("no_pager", False)}
COLORS = ("auto", "always", "never")


class Command:
    """One command's parameters as click declares them in gitckpt/cli/main.py."""

    def __init__(self, positional: tuple[str, ...], values: dict[str, str],
                 multiple: dict[str, str], flags: dict[str, str],
                 ints: frozenset[str] = frozenset(),
                 defaults: dict[str, Any] | None = None) -> None:
        self.positional = positional
        self.values, self.multiple, self.flags = values, multiple, flags  # option -> parameter
        self.ints = ints  # parameters whose values are integers (click.INT: int(value))
        self.defaults = {**{p: () for p in multiple.values()},
                         **{p: False for p in flags.values()}, **(defaults or {})}


COMMANDS = {
    "resume": Command((), {"--task": "task"}, {}, {"--full": "full"}, defaults={"task": None}),
    "save": Command(
        ("title",),
        {"--conclusion": "conclusion", "--description": "description", "--task": "task"},
        {"--next": "next_", "--verified": "verified", "--ran": "ran", "--exit": "exits",
         "--question": "question", "--answered": "answered", "--decision": "decision",
         "--gotcha": "gotcha", "--drop": "drop", "--file": "files", "--plan": "plan"},
        {"--close": "close"}, ints=frozenset({"exits"}),
        defaults={"conclusion": "", "description": "", "task": None}),
}


def parse(argv: list[str]) -> tuple[dict[str, Any], str, dict[str, Any]] | None:
    """(the group's parameters, the command, its parameters) as click would parse `argv`, or
    None where this parser does not decide."""
    group: dict[str, Any] = {"root": ".", "as_json": False, "color": "auto", "no_pager": False}
    at = _options(argv, 0, GLOBAL, group)
    if at is None or at >= len(argv) or argv[at] not in COMMANDS:
        return None
    name, command = argv[at], COMMANDS[argv[at]]
    if group["color"] not in COLORS:
        return None
    table = {**{o: (p, True) for o, p in command.values.items()},
             **{o: (p, True) for o, p in command.multiple.items()},
             **{o: (p, False) for o, p in command.flags.items()}}
    multiple = set(command.multiple.values())
    params: dict[str, Any] = dict(command.defaults)
    words: list[str] = []
    i = at + 1
    while i < len(argv):
        token = argv[i]
        if not token.startswith("-"):
            words.append(token)
            i += 1
            continue
        found = _option(argv, i, table)
        if found is None:
            return None
        param, value, i = found
        if param in command.ints:
            try:
                value = int(value)
            except ValueError:
                return None
        if param in multiple:
            params[param] = (*params[param], value)
        else:
            params[param] = value  # click: the last one given
    if len(words) != len(command.positional):
        return None
    params.update(zip(command.positional, words, strict=True))
    if name == "save" and len(params["ran"]) != len(params["exits"]):
        return None  # the command's own usage error, click's to say
    return group, name, params


def _options(argv: list[str], i: int, table: dict[str, tuple[str, bool]], into: dict[str, Any]
             ) -> int | None:
    """Read options from argv[i] into `into` up to the first word that is not one; its
    index, or None at one this parser does not decide."""
    while i < len(argv) and argv[i].startswith("-"):
        found = _option(argv, i, table)
        if found is None:
            return None
        param, value, i = found
        into[param] = value
    return i


def _option(argv: list[str], i: int, table: dict[str, tuple[str, bool]]
            ) -> tuple[str, Any, int] | None:
    """The option at argv[i]: (parameter, value, the index after it), or None. A value is
    the next word or follows `=` on a long option; a flag has none; a value that starts with
    `-` is left to click, as are `--`, short options run together and `-C=...`."""
    token = argv[i]
    name, eq, value = token.partition("=") if token.startswith("--") else (token, "", "")
    if name not in table:
        return None
    param, takes = table[name]
    if not takes:
        return None if eq else (param, True, i + 1)
    if not eq:
        if i + 1 >= len(argv):
            return None
        value, i = argv[i + 1], i + 1
    if value.startswith("-"):
        return None
    return param, value, i + 1


def run(argv: list[str]) -> None:
    """Run `argv` here and exit, when this parser takes it; return when click must."""
    if os.environ.get("_GITCKPT_CLICK") or os.environ.get("_GITCKPT_COMPLETE"):
        return
    parsed = parse(argv)
    if parsed is None:
        return
    group, name, params = parsed
    from gitckpt.cli import invocation
    from gitckpt.core import progress

    c = invocation.Ctx(group["root"], group["as_json"], group["color"], not group["no_pager"])
    body = invocation.resume if name == "resume" else invocation.save

    def work() -> object:
        show = sys.stderr.isatty() and not group["as_json"]
        with progress.reporting(invocation.TerminalProgress() if show else None):
            return body(c, **params)

    invocation.finish(work, lambda: bool(group["as_json"]))
