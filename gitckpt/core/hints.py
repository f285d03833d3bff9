"""Suggested next operations as data, and how each front end spells them: a command line for
the CLI, a tool call for MCP.

A hint names what to do next with `{0}`, `{1}`... placeholders filled by its suggestions
(`Call`s and `Arg`s), so one error reads `gitckpt init "NAME" --goal "..."` in a terminal and
`ckpt_init(name=..., goal=...)` to an agent. A suggestion argument of `...` is a blank for the
reader to fill in.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import field
from typing import Any

from gitckpt.core.record import dataclass

CLI, MCP = "cli", "mcp"
BLANK = ...

# op: (CLI words, positional argument names). Ops without a tool are CLI-only.
_COMMANDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "init": ("init", ("name",)), "save": ("save", ("title",)), "resume": ("resume", ()),
    "log": ("log", ()), "tasks": ("tasks", ()), "restore": ("restore", ("target", "paths")),
    "diff": ("diff", ("base", "target")), "capture": ("capture", ()),
    "switch": ("switch", ("task",)), "export": ("export", ("to",)),
    "import": ("import", ("package",)), "compress": ("compress", ()),
    "doctor": ("doctor", ()), "adopt": ("adopt", ()), "scope": ("scope", ("paths",)),
    "push": ("push", ("remote",)), "fetch": ("fetch", ("remote",)),
    "revert": ("revert", ("target", "paths")), "config_remote": ("config remote", ("name",)),
    "config_transcripts": ("config transcripts", ("state",)),
}
# op: (tool, arguments the tool call always carries).
_TOOLS: dict[str, tuple[str, dict[str, object]]] = {
    "init": ("ckpt_init", {}), "save": ("ckpt_save", {}), "resume": ("ckpt_resume", {}),
    "log": ("ckpt_log", {}), "tasks": ("ckpt_log", {"all_tasks": True}),
    "restore": ("ckpt_restore", {}), "diff": ("ckpt_diff", {}),
    "capture": ("ckpt_capture", {}), "switch": ("ckpt_switch", {}),
    "export": ("ckpt_export", {}), "import": ("ckpt_import", {}),
    "compress": ("ckpt_compress", {}),
    "push": ("ckpt_push", {}), "fetch": ("ckpt_fetch", {}), "revert": ("ckpt_revert", {}),
}
# Tool argument: CLI option, where the names differ.
_FLAGS = {"confirm": "yes", "as_id": "as", "min_steps": "min", "all_tasks": "all"}
# (tool argument, value): the CLI switch that says the same.
_SWITCHES: dict[tuple[str, object], str] = {("format", "full"): "--full"}


@dataclass(frozen=True)
class Call:
    """An operation to run next (`op` is a key of the tables above) with its arguments."""

    op: str
    args: dict[str, object] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"op": self.op, "args": {k: None if v is BLANK else v
                                        for k, v in self.args.items()}}

    def spell(self, voice: str) -> str:
        return _as_tool(self) if voice == MCP else _as_command(self)


def call(op: str, **args: object) -> Call:
    if op not in _COMMANDS:
        raise ValueError(f"unknown operation {op!r}")
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


def tool_prefix() -> str:
    """GITCKPT_TOOL_PREFIX: what the host puts before the tool names it shows the model
    (Claude Code's plugin: `mcp__plugin_gitckpt_gitckpt__`), so a suggested call names the
    tool the model can call; letters, digits and `_` only, else none."""
    prefix = os.environ.get("GITCKPT_TOOL_PREFIX", "")
    return prefix if re.fullmatch(r"[A-Za-z0-9_]{0,64}", prefix) else ""


def _as_tool(c: Call) -> str:
    if c.op not in _TOOLS:  # a CLI-only operation: say so rather than invent a tool
        return f"`{_as_command(c)}` in a terminal"
    tool, fixed = _TOOLS[c.op]
    tool = tool_prefix() + tool
    args = {k: v for k, v in {**c.args, **fixed}.items() if v is not None}
    return f"{tool}({', '.join(f'{k}={_json(v)}' for k, v in args.items())})"


def _as_command(c: Call) -> str:
    words, positional = _COMMANDS[c.op]
    out, after = ["gitckpt", words], []
    for name in positional:
        value = c.args.get(name)
        if value is BLANK:
            out.append(f'"{name.upper()}"')
        elif isinstance(value, list | tuple):  # paths go last, after `--`
            after = ["--", *(shlex.quote(str(v)) for v in value)] if value else []
        elif value is not None:
            out.append(shlex.quote(str(value)))
    for name, value in c.args.items():
        if (name, value) in _SWITCHES:
            out.append(_SWITCHES[name, value])
        elif name not in positional and value is not None and value is not False:
            out.append(_option(name, '"..."', raw=True) if value is BLANK else _option(name, value))
    return " ".join(out + after)


def _option(name: str, value: object, raw: bool = False) -> str:
    flag = "--" + _FLAGS.get(name, name).replace("_", "-")
    if value is True:
        return flag
    return f"{flag} {value if raw else shlex.quote(str(value))}"
