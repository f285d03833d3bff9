"""The agent hosts that have hooks: how each names the four moments, what its JSON input holds,
what it reads back on stdout, and the project config file that wires gitckpt's hooks in.

Formats as documented by each host (docs/hosts.md, cites the pages): Claude Code
(code.claude.com/docs/en/hooks), Codex (developers.openai.com/codex/hooks), GitHub Copilot CLI
(docs.github.com/en/copilot/reference/hooks-reference), Cursor (cursor.com/docs/hooks), Devin
CLI (docs.devin.ai/cli/extensibility/hooks), Gemini CLI (geminicli.com/docs/hooks/reference),
OpenCode (opencode.ai/docs/plugins) and Windsurf (docs.windsurf.com/windsurf/cascade/hooks).
Nothing here imports the engine.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar

from gitckpt.core import limits
from gitckpt.safety.redact import clean

if TYPE_CHECKING:
    from gitckpt.core.ops.fields import Voice


@dataclass(frozen=True)
class Event:
    """One host event, in gitckpt's terms."""

    cwd: str | None  # the workspace the event is about
    session: str | None = None  # the host's session (conversation, trajectory) id
    tool: str | None = None  # post-tool: the host's tool name
    command: str | None = None  # post-tool, a shell tool: the command line
    source: str | None = None  # session-start: startup | resume | clear | compact | ...
    stop_active: bool = False  # stop: the agent is already continuing because of a hook
    aborted: bool = False  # stop: the user stopped the agent (nothing to remind of)
    prompt: str | None = None  # prompt: what the user submitted
    model: str | None = None  # the model, where the host's input names it
    transcript: str | None = None  # the session's transcript file, where the host names one
    voice: Voice = "mcp"  # how texts name what to do: tool calls, or (`--cli`) CLI commands
    compressing: bool = True  # pre-compact: the host says it compresses (not only may)

    def __post_init__(self) -> None:
        # What a host sends is data from elsewhere: the names it gives are kept as a save's
        # titles are, cleaned and cut (a prompt and a command are cut where they are kept,
        # after redaction)
        for key in ("session", "tool", "source", "model"):
            value = getattr(self, key)
            if value is not None:
                object.__setattr__(self, key, clean(value, one_line=True)[: limits.TITLE] or None)


def _text(data: dict[str, Any], *keys: str) -> str | None:
    """The first of `keys` whose value is a non-empty string."""
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Host:
    """A host whose hooks follow Claude Code's shape (event, matcher group, command handlers;
    `session_id`, `cwd`, `tool_name`, `tool_input` on stdin; `hookSpecificOutput` back)."""

    name: str
    title: str
    config: str  # the project's config file, relative to the project root
    events: dict[str, str]  # gitckpt's moment -> the host's event name
    changing: frozenset[str]  # the tools that change files
    shells: frozenset[str]  # those of them whose input is a command line
    matchers: dict[str, str] = field(default_factory=dict)  # moment -> matcher
    docs: str = ""
    local: str | None = None  # the untracked settings file beside `config`, where there is one
    user: str | None = None  # the user's own config, relative to the home folder
    # Where the host declares MCP servers (a JSON file's `mcpServers`), by scope as above; a
    # host without such a file has gitckpt's server wired by hand (`hook install` says how).
    mcp: dict[str, str] = field(default_factory=dict)
    cli: bool = False  # the hooks' texts name CLI commands: the host has no gitckpt server
    #: What the host puts before the names of the tools of an MCP server named `gitckpt`
    #: when it shows them to its model (the suite of real hosts reads it off their requests)
    tools: str = ""
    reads_comments: ClassVar[bool] = False  # its config file may hold // and /* */ comments
    plugin: ClassVar[str | None] = None  # a plugin file of gitckpt's instead of hooks in JSON

    def scopes(self) -> dict[str, str | None]:
        """Where each scope's config lives: project and local relative to the project, user
        relative to the home folder; None where the host has none."""
        return {"project": self.config, "local": self.local, "user": self.user}

    # -- input ---------------------------------------------------------------------------

    def event(self, kind: str, data: dict[str, Any], here: str) -> Event:
        tool_input = _dict(data.get("tool_input"))
        tool = _text(data, "tool_name")
        return Event(cwd=_text(data, "cwd"), session=_text(data, "session_id"), tool=tool,
                     command=_text(tool_input, "command") if tool in self.shells else None,
                     source=_text(data, "source"),
                     stop_active=data.get("stop_hook_active") is True,
                     prompt=_text(data, "prompt"), model=_text(data, "model"),
                     transcript=_text(data, "transcript_path"))

    def changes_files(self, tool: str | None) -> bool:
        return tool in self.changing

    # -- output --------------------------------------------------------------------------

    def context(self, kind: str, text: str) -> str:
        """session-start's stdout: the handoff as the session's additional context."""
        return _json({"hookSpecificOutput": {"hookEventName": self.events[kind],
                                             "additionalContext": text}})

    def post_tool_output(self) -> str:
        return ""

    def prompt_output(self) -> str:
        """stdout after a prompt was kept: nothing (Claude Code would add stdout to the
        prompt as context)."""
        return ""

    def nothing(self) -> str:
        """stdout when the hook has nothing to say (most hosts: nothing at all)."""
        return ""

    def remind(self, kind: str, line: str) -> str:
        """The reminder's stdout. Stop: continue once with the reminder as the reason
        (never twice in a row: `stop_hook_active`); PreCompact cannot reach the agent, so
        session-start says it after the compaction."""
        if kind == "stop":
            return _json({"decision": "block", "reason": line})
        return ""

    # -- config --------------------------------------------------------------------------

    def command(self, kind: str, program: str = "gitckpt") -> str:
        """The hook's command line (`--cli` where the host has no gitckpt MCP server: its
        texts name CLI commands, not tool calls)."""
        suffix = "" if self.name == "claude" else f" --host {self.name}"
        return f"{program} hook {kind}{suffix}{' --cli' if self.cli else ''}"

    def hooks(self, program: str = "gitckpt") -> dict[str, list[dict[str, Any]]]:
        """The `hooks` object gitckpt adds to the host's config; `program` starts gitckpt
        (the plugin's: its launcher)."""
        out: dict[str, list[dict[str, Any]]] = {}
        for kind, events in self.events.items():
            for event in events.split(","):
                group: dict[str, Any] = {}
                if kind in self.matchers:
                    group["matcher"] = self.matchers[kind]
                group["hooks"] = [self.handler(kind, program)]
                out.setdefault(event, []).append(group)
        return out

    def handler(self, kind: str, program: str = "gitckpt") -> dict[str, Any]:
        return {"type": "command", "command": self.command(kind, program), "timeout": 30}

    def without(self, config: dict[str, Any]) -> dict[str, Any]:
        """`config` without gitckpt's hooks: an event left empty goes, and `hooks` too if
        nothing is left in it; every other key and handler is kept as it was."""
        out = dict(config)
        hooks = {event: _without_ours(groups)
                 for event, groups in _dict(config.get("hooks")).items()}
        hooks = {event: groups for event, groups in hooks.items() if groups}
        if hooks:
            out["hooks"] = hooks
        else:
            out.pop("hooks", None)
        return out

    def merged(self, config: dict[str, Any]) -> dict[str, Any]:
        """`config` with gitckpt's hooks in it: any earlier gitckpt handler is replaced, every
        other key and handler is kept as it was."""
        out = dict(config)
        hooks = {event: _without_ours(groups)
                 for event, groups in _dict(config.get("hooks")).items()}
        hooks = {event: groups for event, groups in hooks.items() if groups}
        for event, groups in self.hooks().items():
            hooks.setdefault(event, []).extend(groups)
        out["hooks"] = hooks
        return out


#: Exactly the commands gitckpt writes: a user's line that merely starts with one
#: (`gitckpt hook stop && notify-send done`) is the user's, and is kept.
_OURS = re.compile(
    r"gitckpt hook (session-start|prompt|post-tool|pre-compact|stop)( --host [a-z]+)?"
    r"( --cli)?")


def gitckpts_handler(handler: Any) -> bool:
    if not isinstance(handler, dict):
        return False
    command = handler.get("command", handler.get("bash"))  # (Copilot names it `bash`)
    return isinstance(command, str) and _OURS.fullmatch(command.strip()) is not None


def _without_ours(groups: Any) -> Any:
    """A host's list for one event without gitckpt's handlers (nested groups or flat);
    anything else as it was."""
    if not isinstance(groups, list):
        return groups
    out: list[Any] = []
    for group in groups:
        if gitckpts_handler(group):
            continue
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            inner = [h for h in group["hooks"] if not gitckpts_handler(h)]
            if not inner:
                continue
            group = {**group, "hooks": inner}
        out.append(group)
    return out


def _json(value: dict[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False) + "\n"


class Claude(Host):
    """Claude Code: Stop's reminder is `additionalContext`, feedback the model acts on (the
    conversation continues) shown as "Stop hook feedback"; `decision: block` would be shown to
    the user as a hook error (CHANGELOG 2.1.163; the same `stop_hook_active` guard)."""

    def remind(self, kind: str, line: str) -> str:
        if kind == "stop":
            return _json({"hookSpecificOutput": {"hookEventName": "Stop",
                                                 "additionalContext": line}})
        return ""


class Devin(Host):
    """Devin CLI: Claude Code's shape (docs.devin.ai/cli/extensibility/hooks), its hooks under
    `hooks` in `.devin/config.json`; its input names no folder, so the workspace is
    DEVIN_PROJECT_DIR, which Devin sets for its hooks (the hook's `here`, see
    ends.hook_folder). Tool names are lower case: exec, edit, write."""

    def event(self, kind: str, data: dict[str, Any], here: str) -> Event:
        return replace(super().event(kind, data, here), cwd=_text(data, "cwd") or here)


class OpenCode(Host):
    """OpenCode: no hooks file but a plugin (opencode.ai/docs/plugins), gitckpt's own
    `.opencode/plugins/gitckpt.js` (hooks/opencode.js), which runs `gitckpt hook KIND --host
    opencode` with its own small JSON (`cwd`, `session_id`, `tool_name`, `tool_input`,
    `source`) and reads plain text back: the handoff it adds to the system prompt, the
    reminder it sends as the session's next message."""

    plugin: ClassVar[str] = "opencode.js"  # the file hook install writes, from the package

    def context(self, kind: str, text: str) -> str:
        return text

    def remind(self, kind: str, line: str) -> str:
        return line


class Gemini(Host):
    """Gemini CLI: Claude Code's shape with its own names; `AfterAgent` retries on `deny`,
    `PreCompress` shows a `systemMessage` to the user; timeouts in milliseconds. A hook that
    prints nothing has its stderr shown to the user as if it were a message, so every answer
    is JSON (`{}` for none)."""

    reads_comments = True  # settings.json: comments are stripped before parsing

    def event(self, kind: str, data: dict[str, Any], here: str) -> Event:
        # PreCompress fires before every request with trigger "auto", before the check of
        # whether the history is long enough to compress (seen in headless sessions): only
        # "manual", the user's /compress, says a compression happens.
        return replace(super().event(kind, data, here),
                       compressing=kind != "pre-compact" or data.get("trigger") == "manual")

    def nothing(self) -> str:
        return _json({})

    def remind(self, kind: str, line: str) -> str:
        if kind == "stop":
            return _json({"decision": "deny", "reason": line})
        return _json({"systemMessage": line})

    def handler(self, kind: str, program: str = "gitckpt") -> dict[str, Any]:
        return {"name": f"gitckpt-{kind}", "type": "command",
                "command": self.command(kind, program), "timeout": 30_000}


class Cursor(Host):
    """Cursor: camelCase events with flat handlers; `workspace_roots` and `conversation_id`
    on stdin; `additional_context`, `followup_message` and `user_message` back."""

    def event(self, kind: str, data: dict[str, Any], here: str) -> Event:
        roots = data.get("workspace_roots")
        root = roots[0] if isinstance(roots, list) and roots and isinstance(roots[0], str) \
            else None
        name = _text(data, "hook_event_name")
        tool = {"afterShellExecution": "Shell", "afterFileEdit": "Edit"}.get(name or "")
        return Event(cwd=_text(data, "cwd") or root,
                     session=_text(data, "conversation_id", "session_id"), tool=tool,
                     command=_text(data, "command") if tool == "Shell" else None,
                     source="startup" if kind == "session-start" else None,
                     # loop_count counts the follow-ups of the whole conversation, not of this
                     # stop: a reminder is said once per unsaved state instead (service/events)
                     aborted=data.get("status") == "aborted",
                     prompt=_text(data, "prompt"), model=_text(data, "model"),
                     transcript=_text(data, "transcript_path"))

    def context(self, kind: str, text: str) -> str:
        return _json({"additional_context": text})

    def prompt_output(self) -> str:
        return _json({"continue": True})  # beforeSubmitPrompt: the prompt goes on

    def remind(self, kind: str, line: str) -> str:
        if kind == "stop":
            return _json({"followup_message": line})
        return _json({"user_message": line})

    def hooks(self, program: str = "gitckpt") -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for kind, events in self.events.items():
            for event in events.split(","):
                out.setdefault(event, []).append({"command": self.command(kind, program)})
        return out

    def merged(self, config: dict[str, Any]) -> dict[str, Any]:
        out = super().merged(config)
        out.setdefault("version", 1)
        return {"version": out.pop("version"), **out}


class Copilot(Host):
    """GitHub Copilot CLI: `.github/hooks/*.json` files of version 1, each handler a `bash`
    command with `timeoutSec`; gitckpt uses its VS Code compatible form (PascalCase events,
    snake_case fields, as Claude Code's), and reads `sessionId` too. Copilot may ignore a
    matcher, so none is relied on: every tool but the read-only ones may change files (a
    capture where nothing changed records nothing)."""

    READ_ONLY = frozenset({"view", "read", "Read", "grep", "Grep", "glob", "Glob", "ls", "LS",
                           "web_fetch", "WebFetch", "WebSearch", "fetch", "think", "report_intent"})

    def event(self, kind: str, data: dict[str, Any], here: str) -> Event:
        base = super().event(kind, data, here)
        return replace(base, cwd=base.cwd or here,
                       session=base.session or _text(data, "sessionId"))

    def changes_files(self, tool: str | None) -> bool:
        # (gitckpt's own tools record their boundary drifts themselves)
        return tool is not None and tool not in self.READ_ONLY \
            and not tool.startswith(self.tools)

    def context(self, kind: str, text: str) -> str:
        """The handoff as a top-level `additionalContext`: Copilot hands the model that one
        as a message of its own, and drops `hookSpecificOutput`'s (seen in its requests)."""
        return _json({"additionalContext": text})

    def handler(self, kind: str, program: str = "gitckpt") -> dict[str, Any]:
        return {"type": "command", "bash": self.command(kind, program), "timeoutSec": 30}

    def hooks(self, program: str = "gitckpt") -> dict[str, list[dict[str, Any]]]:
        return {event: [self.handler(kind, program)] for kind, event in self.events.items()}

    def merged(self, config: dict[str, Any]) -> dict[str, Any]:
        out = super().merged(config)
        out.setdefault("version", 1)
        return {"version": out.pop("version"), **out}


class Windsurf(Host):
    """Windsurf (Cascade): snake_case events, `tool_info` on stdin, no output channel and no
    session or compaction events: only the post-tool drift."""

    def event(self, kind: str, data: dict[str, Any], here: str) -> Event:
        info = _dict(data.get("tool_info"))
        name = _text(data, "agent_action_name")
        tool = {"post_run_command": "run_command", "post_write_code": "write_code"}.get(
            name or "")
        # A hook runs in the workspace root (its working_directory, by default): `here`.
        return Event(cwd=_text(info, "cwd") or here, session=_text(data, "trajectory_id"),
                     tool=tool, command=_text(info, "command_line") if tool == "run_command"
                     else None)

    def hooks(self, program: str = "gitckpt") -> dict[str, list[dict[str, Any]]]:
        out: dict[str, list[dict[str, Any]]] = {}
        for kind, events in self.events.items():
            for event in events.split(","):
                out.setdefault(event, []).append({"command": self.command(kind, program),
                                                  "show_output": False})
        return out


#: The names Claude Code gives the plugin's tools: mcp__plugin_<plugin>_<server>__<tool>.
PLUGIN_TOOLS = "mcp__plugin_gitckpt_gitckpt__"
#: How the Claude Code plugin starts gitckpt: its launcher (bin/gitckpt), which finds or
#: builds a gitckpt of the plugin's version, told the names the model sees the tools by.
PLUGIN_PROGRAM = f'GITCKPT_TOOL_PREFIX={PLUGIN_TOOLS} "${{CLAUDE_PLUGIN_ROOT}}/bin/gitckpt"'

_CLAUDE_TOOLS = frozenset({"Bash", "PowerShell", "Edit", "Write", "MultiEdit", "NotebookEdit"})

HOSTS: dict[str, Host] = {h.name: h for h in (
    # PostToolUse fires only after a tool succeeded; a failed one (a shell command's non-zero
    # exit, the command that broke a file) fires PostToolUseFailure, with the same fields.
    Claude("claude", "Claude Code", ".claude/settings.json",
           {"session-start": "SessionStart", "prompt": "UserPromptSubmit",
            "post-tool": "PostToolUse,PostToolUseFailure", "pre-compact": "PreCompact",
            "stop": "Stop"},
           _CLAUDE_TOOLS, frozenset({"Bash", "PowerShell"}),
           {"post-tool": "|".join(sorted(_CLAUDE_TOOLS))},
           "https://code.claude.com/docs/en/hooks", ".claude/settings.local.json",
           ".claude/settings.json", {"project": ".mcp.json"}, tools="mcp__gitckpt__"),
    Host("codex", "Codex", ".codex/hooks.json",
         {"session-start": "SessionStart", "prompt": "UserPromptSubmit",
          "post-tool": "PostToolUse",
          "pre-compact": "PreCompact", "stop": "Stop"},
         frozenset({"Bash", "apply_patch", "Edit", "Write"}), frozenset({"Bash"}),
         {"post-tool": "^(Bash|apply_patch|Edit|Write)$"},
         "https://developers.openai.com/codex/hooks", None, ".codex/hooks.json",
         {"project": ".codex/config.toml", "user": ".codex/config.toml"}),
    Cursor("cursor", "Cursor", ".cursor/hooks.json",
           {"session-start": "sessionStart", "prompt": "beforeSubmitPrompt",
            "post-tool": "afterShellExecution,afterFileEdit",
            "pre-compact": "preCompact", "stop": "stop"},
           frozenset({"Shell", "Edit"}), frozenset({"Shell"}), {},
           "https://cursor.com/docs/hooks", None, ".cursor/hooks.json",
           {"project": ".cursor/mcp.json", "user": ".cursor/mcp.json"}),
    # Stop (agentStop) continues on `decision: block`; PreCompact is a notification only
    Copilot("copilot", "GitHub Copilot CLI", ".github/hooks/gitckpt.json",
            {"session-start": "SessionStart", "prompt": "UserPromptSubmit",
             "post-tool": "PostToolUse", "pre-compact": "PreCompact", "stop": "Stop"},
            frozenset(), frozenset({"bash", "Bash"}), {},
            "https://docs.github.com/en/copilot/reference/hooks-reference",
            mcp={"project": ".mcp.json", "user": ".copilot/mcp-config.json"}, tools="gitckpt-"),
    Devin("devin", "Devin CLI", ".devin/config.json",
          {"session-start": "SessionStart", "prompt": "UserPromptSubmit",
           "post-tool": "PostToolUse", "stop": "Stop"},
          frozenset({"exec", "edit", "write"}), frozenset({"exec"}),
          {"post-tool": "^(exec|edit|write)$"},
          "https://docs.devin.ai/cli/extensibility/hooks/overview", ".devin/config.local.json",
          ".config/devin/config.json",
          {"project": ".devin/config.json", "local": ".devin/config.local.json",
           "user": ".config/devin/config.json"}),
    Gemini("gemini", "Gemini CLI", ".gemini/settings.json",
           {"session-start": "SessionStart", "prompt": "BeforeAgent", "post-tool": "AfterTool",
            "pre-compact": "PreCompress", "stop": "AfterAgent"},
           frozenset({"run_shell_command", "write_file", "replace"}),
           frozenset({"run_shell_command"}), {"post-tool": "run_shell_command|write_file|replace"},
           "https://geminicli.com/docs/hooks/reference", None, ".gemini/settings.json",
           {"project": ".gemini/settings.json", "user": ".gemini/settings.json"},
           tools="mcp_gitckpt_"),
    OpenCode("opencode", "OpenCode", ".opencode/plugins/gitckpt.js",
             {"session-start": "experimental.chat.system.transform",
              "prompt": "chat.message", "post-tool": "tool.execute.after",
              "pre-compact": "experimental.session.compacting", "stop": "session.idle"},
             frozenset({"bash", "edit", "write", "patch", "multiedit"}), frozenset({"bash"}),
             {}, "https://opencode.ai/docs/plugins", None, ".config/opencode/plugins/gitckpt.js",
             {"project": "opencode.json", "user": ".config/opencode/opencode.json"},
             tools="gitckpt_"),
    Windsurf("windsurf", "Windsurf", ".windsurf/hooks.json",
             {"post-tool": "post_run_command,post_write_code"},
             frozenset({"run_command", "write_code"}), frozenset({"run_command"}), {},
             "https://docs.windsurf.com/windsurf/cascade/hooks", None,
             ".codeium/windsurf/hooks.json", {"user": ".codeium/windsurf/mcp_config.json"}),
)}
