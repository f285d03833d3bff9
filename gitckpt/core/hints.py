"""Suggested next operations as data, and how each front end spells them: a command line for
the CLI, a tool call for MCP.

A hint names what to do next with `{0}`, `{1}`... placeholders filled by its suggestions
(`Call`s and `Arg`s), so one error reads `gitckpt init "NAME" --goal "..."` in a terminal and
`ckpt_init(name=..., goal=...)` to an agent. A suggestion argument of `...` is a blank for the
reader to fill in.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

CLI, MCP = "cli", "mcp"
BLANK = ...

# How a call is spelled comes from its operation's declaration (core/operations.py): the CLI
# command's words, its positional arguments and options, and the MCP tool.


@dataclass(frozen=True)
class Call:
    """An operation to run next (`op`: a key of core.operations.OPERATIONS) with its
    arguments."""

    op: str
    args: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "args": {k: None if v is BLANK else v
                                        for k, v in self.args.items()}}

    def spell(self, voice: str) -> str:
        return _as_tool(self) if voice == MCP else _as_command(self)


def call(op: str, **args: object) -> Call:
    """A call of `op`, checked when it is spelled (the declarations load only then: errors
    name calls at import; tests/core/test_request.py spells every call gitckpt makes)."""
    return Call(op, args)


@dataclass(frozen=True)
class Arg:
    """An argument to pass: `--task ID` on the command line, `task="ID"` in a tool call."""

    name: str
    value: object = BLANK

    def spell(self, voice: str) -> str:
        if voice == MCP:
            return f"{self.name}={_json(self.value)}"
        if self.value is BLANK:
            return _option(self.name, self.name.upper(), raw=True)
        return _option(self.name, self.value)


Suggestion = Call | Arg


def spell(template: str, suggest: Sequence[Suggestion], voice: str) -> str:
    """`template` with `{0}`, `{1}`... replaced by the suggestions spelled for `voice`."""
    if not suggest:
        return template
    try:
        return template.format(*(s.spell(voice) for s in suggest))
    except (IndexError, KeyError, ValueError):  # braces of its own: the hint as written
        return template


def _json(value: object) -> str:
    return "..." if value is BLANK else json.dumps(value, ensure_ascii=False)


#: The prefix of the tool names of the hook or MCP session at hand (hooks/run.py,
#: mcp/server.py), set from what its process said; None: GITCKPT_TOOL_PREFIX of this one.
HOST_PREFIX: ContextVar[str | None] = ContextVar("host_prefix", default=None)


def tool_prefix() -> str:
    """What the host puts before the tool names it shows the model, so a suggested call
    names the tool the model can call: the hook's or the session's (its GITCKPT_TOOL_PREFIX,
    as Claude Code's plugin sets `mcp__plugin_gitckpt_gitckpt__`, else its host's:
    `mcp_gitckpt_` in Gemini CLI), else this process's GITCKPT_TOOL_PREFIX; letters,
    digits, `_` and `-` only, else none."""
    prefix = HOST_PREFIX.get()
    if prefix is None:
        prefix = os.environ.get("GITCKPT_TOOL_PREFIX", "")
    return prefix if re.fullmatch(r"[A-Za-z0-9_-]{0,64}", prefix) else ""


def _declared(name: str) -> type[Any]:
    from gitckpt.core.operations import OPERATIONS

    op = OPERATIONS.get(name)
    if op is None or op.command is None:
        raise ValueError(f"unknown operation {name!r}")
    return op


def _as_tool(c: Call) -> str:
    op = _declared(c.op)
    if op.tool is None:  # a CLI-only operation: say so rather than invent a tool
        return f"`{_as_command(c)}` in a terminal"
    args = {k: v for k, v in {**c.args, **op.tool_args}.items() if v is not None}
    return f"{tool_prefix() + op.tool}({', '.join(f'{k}={_json(v)}' for k, v in args.items())})"


def _as_command(c: Call) -> str:
    from gitckpt.core.request import params

    op = _declared(c.op)
    declared = {p.name: p for p in params(op)}
    positional = [p.name for p in declared.values() if p.spec.positional or p.spec.after_dashes]
    out, after = ["gitckpt", str(op.command)], []
    for name in positional:
        value = c.args.get(name)
        if value is BLANK:
            out.append(f'"{name.upper()}"')
        elif isinstance(value, list | tuple):  # paths go last, after `--`
            after = ["--", *(shlex.quote(str(v)) for v in value)] if value else []
        elif value is not None:
            out.append(shlex.quote(str(value)))
    for name, value in c.args.items():
        if name in positional or value is None or value is False:
            continue
        p = declared.get(name)
        switches = p.spec.cli if p is not None and isinstance(p.spec.cli, Mapping) else {}
        switch = next((flag for flag, (v, _) in switches.items() if v == value), None)
        if switch is not None:
            out.append(switch)
        else:
            out.append(_option(name, '"..."', raw=True) if value is BLANK else _option(name, value))
    return " ".join(out + after)


def _option(name: str, value: object, raw: bool = False) -> str:
    flag = _flags().get(name) or "--" + name.replace("_", "-")
    if value is True:
        return flag
    return f"{flag} {value if raw else shlex.quote(str(value))}"


@functools.cache
def _flags() -> dict[str, str]:
    """Each input's CLI option, by its name (the same in every operation that takes it)."""
    from gitckpt.core.operations import OPERATIONS
    from gitckpt.core.request import params

    return {p.name: p.option for op in OPERATIONS.values() for p in params(op)
            if isinstance(p.spec.cli, str) and not p.spec.positional}
