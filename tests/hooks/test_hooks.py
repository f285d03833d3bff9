"""Agent hosts' hooks: each host's documented JSON on stdin of the real `gitckpt hook` in a
real repository; the handoff only with an active task, one attributed drift per changing tool
call, reminders once, and never a failure or a stray byte on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import service

from gitckpt.hooks import EVENTS, HOST_NAMES
from gitckpt.hooks.hosts import HOSTS

SECRET = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"


def hook(kind: str, data: dict | str, *, host: str | None = None, cwd: Path | None = None,
         env: dict | None = None, cli: bool = False) -> subprocess.CompletedProcess:
    """The real hook command, as a host runs it: JSON on stdin, in the project folder."""
    args = [sys.executable, "-m", "gitckpt", "hook", kind] + (["--host", host] if host else [])
    args += ["--cli"] if cli else []
    raw = data if isinstance(data, str) else json.dumps(data)
    return subprocess.run(args, input=raw, capture_output=True, text=True, cwd=cwd,
                          env={**os.environ, **(env or {})}, timeout=60)


def claude(event: str, cwd: Path, **fields) -> dict:
    """Claude Code's common fields (code.claude.com/docs/en/hooks) and the event's own."""
    return {"session_id": "sess-1", "transcript_path": str(Path(cwd).parent / "t.jsonl"),
            "cwd": str(cwd),
            "permission_mode": "default", "hook_event_name": event, **fields}


def drifts(root: Path) -> list:
    tl = service.open_timeline(root)
    tid = tl.resolve(None)
    return tl.drifts(tid, tl.head(tid).n)


def quiet(p: subprocess.CompletedProcess) -> None:
    """Exit 0, nothing on stdout, one log line on stderr."""
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert p.stderr.startswith("gitckpt: hook"), p.stderr
    assert p.stderr.count("\n") == 1, p.stderr


def test_the_names_the_entry_knows_are_the_hosts_and_events():
    assert set(HOST_NAMES) == set(HOSTS)
    assert EVENTS == ("session-start", "prompt", "post-tool", "pre-compact", "stop")


# -- session start -----------------------------------------------------------------------

@pytest.mark.parametrize("source", ["startup", "resume", "clear", "compact"])
def test_session_start_prints_the_handoff_as_context(ws, source):
    service.init(ws.root, "hooked task", goal="ship the hooks")
    service.save(ws.root, "first step", conclusion="it works", next="write the docs")
    p = hook("session-start", claude("SessionStart", ws.root, source=source))
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "hooked task" in context
    assert "ship the hooks" in context
    assert "write the docs" in context
    assert "ckpt_save(" in context
    assert len(context) < 10_000  # Claude Code's cap for additional context


def test_session_start_without_a_task_says_nothing_and_creates_nothing(tmp_path, hermetic):
    folder = hermetic / "empty"
    folder.mkdir()
    (folder / "a.txt").write_text("x")
    p = hook("session-start", claude("SessionStart", folder, source="startup"))
    quiet(p)
    assert "no active task" in p.stderr
    assert sorted(os.listdir(folder)) == ["a.txt"]


def test_session_start_in_a_repository_without_a_task(repo):
    p = hook("session-start", claude("SessionStart", repo, source="startup"))
    quiet(p)
    assert subprocess.run(["git", "-C", str(repo), "for-each-ref", "refs/checkpoints"],
                          capture_output=True, text=True).stdout == ""


# -- post tool ---------------------------------------------------------------------------

def test_post_tool_records_one_drift_naming_the_tool_call(ws):
    service.init(ws.root, "t")
    (ws.root / "gen.txt").write_text("made by a shell command\n")
    command = f"make gen && export GITHUB_TOKEN={SECRET}"
    p = hook("post-tool", claude("PostToolUse", ws.root, tool_name="Bash",
                                 tool_input={"command": command, "description": "gen"},
                                 tool_response={"stdout": "", "stderr": ""}))
    quiet(p)
    [d] = drifts(ws.root)
    assert d.note.trigger == "tool"
    assert d.note.tool["name"] == "Bash"
    assert d.note.tool["session"] == "sess-1"
    assert d.note.tool["host"] == "claude"
    assert d.note.tool["command"].startswith("make gen && export GITHUB_TOKEN=")
    assert SECRET not in json.dumps(d.note.tool)
    assert d.note.changes["added"] == ["gen.txt"]
    # Nothing changed since: no second drift.
    quiet(hook("post-tool", claude("PostToolUse", ws.root, tool_name="Bash",
                                   tool_input={"command": "ls"})))
    assert len(drifts(ws.root)) == 1


@pytest.mark.parametrize(("tool", "field"), [("Write", "file_path"), ("Edit", "file_path"),
                                        ("NotebookEdit", "notebook_path"),
                                        ("MultiEdit", "file_path")])
def test_post_tool_for_the_file_tools(ws, tool, field):
    service.init(ws.root, "t")
    (ws.root / "README.md").write_text("edited by the agent\n")
    quiet(hook("post-tool", claude("PostToolUse", ws.root, tool_name=tool,
                                   tool_input={field: str(ws.root / "README.md")})))
    [d] = drifts(ws.root)
    assert d.note.tool["name"] == tool
    assert "command" not in d.note.tool
    assert d.note.changes["modified"] == ["README.md"]


def test_a_tool_that_changes_nothing_is_not_scanned(ws):
    service.init(ws.root, "t")
    (ws.root / "new.txt").write_text("x")
    p = hook("post-tool", claude("PostToolUse", ws.root, tool_name="Read",
                                 tool_input={"file_path": str(ws.root / "new.txt")}))
    quiet(p)
    assert "does not change files" in p.stderr
    assert drifts(ws.root) == []


def test_the_drift_is_readable_in_plain_git(repo):
    service.init(repo, "t")
    (repo / "out.txt").write_text("x\n")
    quiet(hook("post-tool", claude("PostToolUse", repo, tool_name="Bash",
                                   tool_input={"command": "echo x > out.txt"})))
    tid = service.open_timeline(repo).resolve(None)
    msg = subprocess.run(["git", "-C", str(repo), "log", "-1", "--format=%B",
                          f"refs/checkpoints/{tid}/drifts/0"], capture_output=True,
                         text=True).stdout
    assert "trigger: tool" in msg
    assert "Tool: Bash: echo x > out.txt" in msg


# -- what must never fail the host -------------------------------------------------------

@pytest.mark.parametrize("raw", ["{not json", "", "[1, 2]", '"text"', "\x00\xff"])
def test_malformed_input(ws, raw):
    service.init(ws.root, "t")
    for kind in EVENTS:
        quiet(hook(kind, raw, cwd=ws.root))


def test_a_missing_or_wrong_cwd(ws):
    service.init(ws.root, "t")
    (ws.root / "x.txt").write_text("x")
    data = claude("PostToolUse", ws.root, tool_name="Bash", tool_input={"command": "x"})
    del data["cwd"]
    p = hook("post-tool", data, cwd=ws.root)
    quiet(p)
    assert "no folder" in p.stderr
    quiet(hook("post-tool", {**data, "cwd": str(ws.root / "nowhere")}))
    quiet(hook("post-tool", {**data, "cwd": 42}))
    assert drifts(ws.root) == []


def test_a_folder_without_a_task(hermetic):
    folder = hermetic / "nothing"
    folder.mkdir()
    for kind in EVENTS:
        quiet(hook(kind, claude("PostToolUse", folder, tool_name="Bash",
                                tool_input={"command": "x"})))
    assert os.listdir(folder) == []


def test_a_busy_store(ws):
    service.init(ws.root, "t")
    (ws.root / "x.txt").write_text("x")
    tl = service.open_timeline(ws.root)
    held, done = threading.Event(), threading.Event()

    def hold():
        with tl.store.lock():
            held.set()
            done.wait(30)

    t = threading.Thread(target=hold)
    t.start()
    try:
        held.wait(10)
        p = hook("post-tool", claude("PostToolUse", ws.root, tool_name="Bash",
                                     tool_input={"command": "x"}))
        quiet(p)
        assert "busy" in p.stderr.lower() or "lock" in p.stderr.lower(), p.stderr
    finally:
        done.set()
        t.join()
    assert drifts(ws.root) == []


def test_an_unknown_host_or_event_never_blocks_the_host(ws):
    """exit 2 would block a Stop or a tool call in Claude Code: a typo is a log line."""
    service.init(ws.root, "t")
    for p in (hook("post-tool", "{}", host="nobody", cwd=ws.root),
              hook("pre-tool", "{}", cwd=ws.root),
              hook("stop", "{}", cwd=ws.root, host="claude --verbose")):
        quiet(p)
        assert "unknown hook command" in p.stderr
    r = subprocess.run([sys.executable, "-m", "gitckpt", "hook", "stop", "--help"],
                       capture_output=True, text=True)
    assert r.returncode == 0
    assert "--host" in r.stdout


# -- reminders ---------------------------------------------------------------------------

def test_stop_reminds_once_when_files_changed_since_the_step(ws):
    service.init(ws.root, "t")
    service.save(ws.root, "first", conclusion="c")
    stop = claude("Stop", ws.root, stop_hook_active=False, last_assistant_message="done")
    quiet(hook("stop", stop))  # nothing changed since step 1
    (ws.root / "more.txt").write_text("unsaved work\n")
    p = hook("stop", stop)
    assert p.returncode == 0
    # feedback the model acts on, not a "Stop hook error" (code.claude.com/docs/en/hooks,
    # CHANGELOG 2.1.163: additionalContext is non-error feedback; the conversation continues)
    out = json.loads(p.stdout)
    assert set(out) == {"hookSpecificOutput"}
    assert out["hookSpecificOutput"]["hookEventName"] == "Stop"
    line = out["hookSpecificOutput"]["additionalContext"]
    assert "ckpt_save" in line
    assert "1 file changed since step 1" in line
    assert "\n" not in line
    assert "mcp__gitckpt__ckpt_save(" in line  # as Claude Code names a server's tools
    quiet(hook("stop", stop))  # the same unsaved state: said once
    quiet(hook("stop", {**stop, "stop_hook_active": True}))
    (ws.root / "more.txt").write_text("more unsaved work\n")
    quiet(hook("stop", {**stop, "stop_hook_active": True}))  # never while continuing
    quiet(hook("stop", stop))  # more edits of the same stretch: not said again
    service.save(ws.root, "second")
    quiet(hook("stop", stop))
    (ws.root / "more.txt").write_text("after the second step\n")  # a new stretch: said
    assert "additionalContext" in json.loads(hook("stop", stop).stdout)["hookSpecificOutput"]


def test_pre_compact_keeps_the_reminder_for_the_session_after_it(ws):
    service.init(ws.root, "t")
    (ws.root / "work.txt").write_text("unsaved\n")
    p = hook("pre-compact", claude("PreCompact", ws.root, trigger="auto",
                                   custom_instructions=None))
    quiet(p)  # PreCompact has no channel to the agent
    assert [d.note.trigger for d in drifts(ws.root)] == ["pre_compact"]
    out = json.loads(hook("session-start", claude("SessionStart", ws.root,
                                                  source="compact")).stdout)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("gitckpt: 1 file changed since step 0")
    again = json.loads(hook("session-start", claude("SessionStart", ws.root, source="compact",
                                                    session_id="sess-2")).stdout)
    assert not again["hookSpecificOutput"]["additionalContext"].startswith("gitckpt: 1 file")


# -- the other hosts, each with its documented input -------------------------------------

def test_codex(ws):
    service.init(ws.root, "codex task")
    base = {"session_id": "c-1", "transcript_path": None, "cwd": str(ws.root),
            "model": "gpt-5", "turn_id": "t1"}
    out = json.loads(hook("session-start", {**base, "hook_event_name": "SessionStart",
                                            "source": "startup"}, host="codex").stdout)
    assert "codex task" in out["hookSpecificOutput"]["additionalContext"]
    (ws.root / "patched.txt").write_text("x\n")
    quiet(hook("post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "Bash",
                             "tool_use_id": "u1", "tool_input": {"command": "touch patched.txt"},
                             "tool_response": {}}, host="codex"))
    [d] = drifts(ws.root)
    assert d.note.tool == {"name": "Bash", "host": "codex", "session": "c-1",
                           "command": "touch patched.txt"}
    stop = json.loads(hook("stop", {**base, "hook_event_name": "Stop", "stop_hook_active": False,
                                    "last_assistant_message": "ok"}, host="codex").stdout)
    assert stop["decision"] == "block"


def test_cursor(ws):
    service.init(ws.root, "cursor task")
    base = {"conversation_id": "conv-1", "generation_id": "g1", "model": "m",
            "cursor_version": "2.1", "workspace_roots": [str(ws.root)], "user_email": None,
            "transcript_path": None}
    out = json.loads(hook("session-start", {**base, "hook_event_name": "sessionStart",
                                            "session_id": "conv-1", "is_background_agent": False,
                                            "composer_mode": "agent"}, host="cursor").stdout)
    assert "cursor task" in out["additional_context"]
    (ws.root / "shell.txt").write_text("x\n")
    quiet(hook("post-tool", {**base, "hook_event_name": "afterShellExecution",
                             "command": "echo x > shell.txt", "output": "", "duration": 5,
                             "sandbox": False}, host="cursor"))
    (ws.root / "README.md").write_text("cursor edit\n")
    quiet(hook("post-tool", {**base, "hook_event_name": "afterFileEdit",
                             "file_path": str(ws.root / "README.md"),
                             "edits": [{"old_string": "a", "new_string": "b"}]}, host="cursor"))
    tools = [(d.note.tool["name"], d.note.tool.get("command")) for d in drifts(ws.root)]
    assert tools == [("Shell", "echo x > shell.txt"), ("Edit", None)]
    stop = json.loads(hook("stop", {**base, "hook_event_name": "stop", "status": "completed",
                                    "loop_count": 0}, host="cursor").stdout)
    assert "ckpt_save" in stop["followup_message"]
    # the same unsaved state: said once (loop_count counts the whole conversation's
    # follow-ups, so it cannot say whether this state was named)
    quiet(hook("stop", {**base, "hook_event_name": "stop", "status": "completed",
                        "loop_count": 1}, host="cursor"))
    (ws.root / "more.txt").write_text("x")  # more of the same unsaved stretch: not again
    quiet(hook("stop", {**base, "hook_event_name": "stop", "status": "completed",
                        "loop_count": 1}, host="cursor"))
    (ws.root / "stopped.txt").write_text("x")  # the user pressed Stop: no follow-up message
    p = hook("stop", {**base, "hook_event_name": "stop", "status": "aborted", "loop_count": 1},
             host="cursor")
    quiet(p)
    assert "the user stopped the agent" in p.stderr


def test_gemini(ws):
    service.init(ws.root, "gemini task")
    base = {"session_id": "g-1", "transcript_path": "/tmp/x", "cwd": str(ws.root),
            "timestamp": "2026-12-01T00:00:00Z"}
    out = json.loads(hook("session-start", {**base, "hook_event_name": "SessionStart",
                                            "source": "startup"}, host="gemini").stdout)
    assert "gemini task" in out["hookSpecificOutput"]["additionalContext"]
    (ws.root / "g.txt").write_text("x\n")
    p = hook("post-tool", {**base, "hook_event_name": "AfterTool",
                           "tool_name": "run_shell_command",
                           "tool_input": {"command": "echo x > g.txt"},
                           "tool_response": {"llmContent": "", "returnDisplay": ""}},
             host="gemini")
    # JSON even with nothing to say: with an empty stdout, Gemini shows stderr to the user
    assert p.returncode == 0
    assert json.loads(p.stdout) == {}
    assert p.stderr.startswith("gitckpt: hook")
    [d] = drifts(ws.root)
    assert d.note.tool["name"] == "run_shell_command"
    assert d.note.tool["command"] == "echo x > g.txt"
    (ws.root / "g2.txt").write_text("x\n")
    # "auto" comes before every request, whether or not the history is compressed: nothing
    p = hook("pre-compact", {**base, "hook_event_name": "PreCompress", "trigger": "auto"},
             host="gemini")
    assert json.loads(p.stdout) == {}
    assert "may not compress" in p.stderr
    p = hook("pre-compact", {**base, "hook_event_name": "PreCompress", "trigger": "manual"},
             host="gemini")
    assert "mcp_gitckpt_ckpt_save(" in json.loads(p.stdout)["systemMessage"]
    stop = json.loads(hook("stop", {**base, "hook_event_name": "AfterAgent", "prompt": "p",
                                    "prompt_response": "r", "stop_hook_active": False},
                           host="gemini").stdout)
    assert stop["decision"] == "deny"
    assert "mcp_gitckpt_ckpt_save(" in stop["reason"]  # as Gemini CLI names a server's tools


def test_a_host_without_the_mcp_server_is_told_cli_commands(ws):
    """`--cli` (what `hook install` writes where the host has no gitckpt MCP server): the
    handoff and the reminders name commands the agent can run in its shell, never a tool it
    does not have; without it they name the tools, as the host shows them."""
    service.init(ws.root, "spoken")
    service.save(ws.root, "first", conclusion="c", next="n")
    base = {"session_id": "g-1", "transcript_path": "/tmp/x", "cwd": str(ws.root),
            "timestamp": "2026-12-01T00:00:00Z"}
    start = json.loads(hook("session-start", {**base, "hook_event_name": "SessionStart",
                                              "source": "startup"}, host="gemini",
                            cli=True).stdout)["hookSpecificOutput"]["additionalContext"]
    assert "gitckpt resume" in start
    assert "gitckpt save" in start
    assert "ckpt_" not in start
    (ws.root / "w.txt").write_text("unsaved\n")
    compact = json.loads(hook("pre-compact", {**base, "hook_event_name": "PreCompress",
                                              "trigger": "manual"}, host="gemini",
                              cli=True).stdout)["systemMessage"]
    assert 'gitckpt save "TITLE" --conclusion "..." --next "..."' in compact
    assert "ckpt_" not in compact
    stop = json.loads(subprocess.run(  # --cli anywhere on the line, as click would take it
        [sys.executable, "-m", "gitckpt", "hook", "stop", "--cli", "--host", "gemini"],
        input=json.dumps({**base, "hook_event_name": "AfterAgent", "prompt": "p",
                          "prompt_response": "r", "stop_hook_active": False}),
        capture_output=True, text=True, timeout=60).stdout)
    assert "gitckpt save" in stop["reason"]
    assert "ckpt_" not in stop["reason"]
    # the plugin's way: the tools as Claude Code names them (a new stretch: said again)
    service.save(ws.root, "second")
    (ws.root / "w.txt").write_text("more\n")
    out = json.loads(hook("stop", claude("Stop", ws.root, stop_hook_active=False),
                          env={"GITCKPT_TOOL_PREFIX": "mcp__plugin_gitckpt_gitckpt__"}).stdout)
    assert "mcp__plugin_gitckpt_gitckpt__ckpt_save(title=..., conclusion=..., next=...)" \
        in out["hookSpecificOutput"]["additionalContext"]


def test_gemini_gets_json_from_every_hook_even_with_nothing_to_do(tmp_path):
    folder = tmp_path / "no-task"
    folder.mkdir()
    for kind, event in (("session-start", "SessionStart"), ("post-tool", "AfterTool"),
                        ("pre-compact", "PreCompress"), ("stop", "AfterAgent")):
        p = hook(kind, {"session_id": "g", "cwd": str(folder), "hook_event_name": event,
                        "tool_name": "write_file"}, host="gemini")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout) == {}, (kind, p.stdout)
    p = hook("stop", "not json", host="gemini")
    assert json.loads(p.stdout) == {}


def test_a_failed_shell_command_in_claude_code_is_attributed(ws):
    """PostToolUse fires only on success; the command that broke a file and exited non-zero
    comes as PostToolUseFailure (code.claude.com/docs/en/hooks), with the same fields."""
    service.init(ws.root, "failures")
    (ws.root / "README.md").write_text("half written by a failing script\n")
    quiet(hook("post-tool", claude("PostToolUseFailure", ws.root, tool_name="Bash",
                                   tool_input={"command": "./migrate.sh && make"},
                                   tool_use_id="toolu_01", error="Exit code 2",
                                   is_interrupt=False)))
    [d] = drifts(ws.root)
    assert d.note.tool["name"] == "Bash"
    assert d.note.tool["command"] == "./migrate.sh && make"
    assert d.changed.modified == ("README.md",)
    groups = HOSTS["claude"].hooks()["PostToolUseFailure"]
    assert groups[0]["hooks"][0]["command"] == "gitckpt hook post-tool"


def test_windsurf(ws):
    service.init(ws.root, "windsurf task")
    base = {"trajectory_id": "traj-1", "execution_id": "e1", "timestamp": "2026-12-01T00:00:00Z"}
    (ws.root / "w.txt").write_text("x\n")
    quiet(hook("post-tool", {**base, "agent_action_name": "post_run_command",
                             "tool_info": {"command_line": "echo x > w.txt",
                                           "cwd": str(ws.root)}}, host="windsurf"))
    (ws.root / "README.md").write_text("windsurf edit\n")
    # post_write_code names no folder: the hook runs in the workspace root.
    quiet(hook("post-tool", {**base, "agent_action_name": "post_write_code",
                             "tool_info": {"file_path": str(ws.root / "README.md"),
                                           "edits": []}}, host="windsurf", cwd=ws.root))
    tools = [(d.note.tool["name"], d.note.tool["session"]) for d in drifts(ws.root)]
    assert tools == [("run_command", "traj-1"), ("write_code", "traj-1")]


# -- the service answers the hook -------------------------------------------------------

@pytest.mark.service
def test_the_service_answers_the_hooks(ws):
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    service.init(ws.root, "served")
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "gitckpt", "mcp", "--root", str(ws.root)],
                                   env={**os.environ})

    async def body():
        async with Client(params) as c:
            await c.call_tool("ckpt_resume", {})
            (ws.root / "r.txt").write_text("served change\n")
            p = await anyio.to_thread.run_sync(lambda: hook("post-tool", claude(
                "PostToolUse", ws.root, tool_name="Bash", tool_input={"command": "gen"})))
            s = await anyio.to_thread.run_sync(lambda: hook("session-start", claude(
                "SessionStart", ws.root, source="resume")))
            spoken = await anyio.to_thread.run_sync(lambda: hook("session-start", claude(
                "SessionStart", ws.root, source="resume", session_id="sess-2"), cli=True))
            return p, s, spoken

    p, s, spoken = anyio.run(body)
    quiet(p)
    assert p.stderr.rstrip().endswith("(served)"), p.stderr
    assert "served" in json.loads(s.stdout)["hookSpecificOutput"]["additionalContext"]
    # the voice goes through the service too: a --cli hook's text names commands
    assert spoken.stderr.rstrip().endswith("(served)"), spoken.stderr
    said = json.loads(spoken.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "gitckpt resume" in said
    assert "ckpt_" not in said
    [d] = [d for d in drifts(ws.root) if d.note.trigger == "tool"]
    assert d.note.tool["command"] == "gen"
    # The service outlives the session; stopped, the next hook runs on its own (and starts
    # a service for the ones after it).
    subprocess.run([sys.executable, "-m", "gitckpt", "service", "stop"], check=True,
                   capture_output=True)
    (ws.root / "r2.txt").write_text("x")
    p = hook("post-tool", claude("PostToolUse", ws.root, tool_name="Bash",
                                 tool_input={"command": "gen2"}))
    quiet(p)
    assert "(served)" not in p.stderr
    assert [d.note.tool["command"] for d in drifts(ws.root) if d.note.trigger == "tool"] \
        == ["gen", "gen2"]


def _listener(serve):
    from gitckpt.service.client import address
    from gitckpt.service.listener import Listener

    return Listener(address(), serve, lambda request, conn: None)


@pytest.mark.service
def test_a_service_with_other_settings_is_not_used(ws, tmp_path):
    from gitckpt.service.client import address, ask

    seen = []
    relay = _listener(lambda r: seen.append(r) or {"stdout": "", "log": "served"})
    assert relay.start()
    try:
        assert ask({"host": "claude", "kind": "stop", "raw": "{}", "here": "/"})["log"] \
            == "served"
        here = address()
        os.environ["GITCKPT_STORE"] = str(tmp_path / "elsewhere")
        try:
            assert address() != here  # other settings, another service's address
            assert ask({"host": "claude", "kind": "stop", "raw": "{}", "here": "/"},
                       start=False) is None
        finally:
            del os.environ["GITCKPT_STORE"]
    finally:
        relay.close()
    assert len(seen) == 1
    assert ask({"host": "claude", "kind": "stop", "raw": "{}", "here": "/"},
               start=False) is None


# -- what an adversarial review found ----------------------------------------------------

@pytest.mark.service
def test_a_stopped_service_does_not_hold_the_hook(ws):
    """A service suspended (SIGSTOP) still has its socket: the hook gives up on it within
    half a second, before sending anything, and runs itself."""
    import signal
    import time

    from gitckpt.service import client

    service.init(ws.root, "t")
    server = subprocess.Popen([sys.executable, "-m", "gitckpt", "service", "run"],
                              cwd=ws.root, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(400):
            if client.listening(client.address()):
                break
            time.sleep(0.05)
        assert client.listening(client.address())
        os.kill(server.pid, signal.SIGSTOP)
        (ws.root / "x.txt").write_text("x")
        p = hook("post-tool", claude("PostToolUse", ws.root, tool_name="Bash",
                                     tool_input={"command": "make"}))
        quiet(p)
        assert "(served)" not in p.stderr, p.stderr
        [d] = drifts(ws.root)
        assert d.note.tool["command"] == "make"
    finally:
        os.kill(server.pid, signal.SIGCONT)
        server.terminate()
        server.wait(30)


@pytest.mark.service
def test_a_service_serves_hooks_whatever_a_sessions_own_settings(monkeypatch):
    """The plugin starts `gitckpt mcp` with GITCKPT_ROOT; the host's hooks have none: both
    reach the one service."""
    from gitckpt.service.client import address, ask

    monkeypatch.setenv("GITCKPT_ROOT", "/somewhere")
    monkeypatch.setenv("GITCKPT_EXPORT_DIR", "/elsewhere")
    here = address()
    relay = _listener(lambda r: {"stdout": "", "log": "served"})
    assert relay.start()
    try:
        monkeypatch.delenv("GITCKPT_ROOT")
        monkeypatch.delenv("GITCKPT_EXPORT_DIR")
        assert address() == here
        assert ask({"host": "claude", "kind": "stop", "raw": "{}", "here": "/"})["log"] \
            == "served"
    finally:
        relay.close()


def test_a_secret_across_the_cut_is_redacted_first(ws):
    service.init(ws.root, "t")
    (ws.root / "x.txt").write_text("x")
    command = "echo " + "a" * 1990 + " " + SECRET
    quiet(hook("post-tool", claude("PostToolUse", ws.root, tool_name="Bash",
                                   tool_input={"command": command})))
    [d] = drifts(ws.root)
    assert SECRET[:8] not in json.dumps(d.note.tool)
    assert len(d.note.tool["command"]) <= 2000


def test_events_a_host_does_not_have(ws):
    service.init(ws.root, "t")
    (ws.root / "x.txt").write_text("x")
    for kind in ("session-start", "stop", "pre-compact"):
        p = hook(kind, {"agent_action_name": "x", "tool_info": {"cwd": str(ws.root)}},
                 host="windsurf", cwd=ws.root)
        quiet(p)
        assert "Windsurf has no" in p.stderr


def test_input_nested_too_deep(ws, hermetic):
    service.init(ws.root, "t")
    quiet(hook("post-tool", '{"a":' * 100_000, cwd=ws.root))
    assert not (hermetic / ".state" / "gitckpt" / "gitckpt.log").exists() or "Traceback" \
        not in (hermetic / ".state" / "gitckpt" / "gitckpt.log").read_text()


def test_stdin_closed(ws):
    service.init(ws.root, "t")
    for args in (["hook", "stop"], ["-C", str(ws.root), "hook", "stop"],
                 ["-C", str(ws.root), "hook", "stop", "--host", "bogus"]):
        p = subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=ws.root,
                           stdin=subprocess.DEVNULL if args[0] == "-C" else None,
                           capture_output=True, text=True, close_fds=True,
                           preexec_fn=lambda: os.close(0))
        assert p.returncode == 0, (args, p.stderr)
        assert p.stdout == "", (args, p.stderr)


def test_a_log_line_cannot_be_forged(hermetic):
    folder = hermetic / "nl\n2026-01-01T00:00:00 gitckpt: forged\x1b[31m"
    folder.mkdir()
    p = hook("post-tool", claude("PostToolUse", folder, tool_name="Bash",
                                 tool_input={"command": "x"}))
    quiet(p)
    assert "\x1b" not in p.stderr
    log = (hermetic / ".state" / "gitckpt" / "gitckpt.log").read_text()
    assert log.count("\n") == 1
    assert "\\n2026" in log


def test_copilot(ws):
    """GitHub Copilot CLI's VS Code compatible hooks (PascalCase events, snake_case fields;
    docs.github.com/en/copilot/reference/copilot-cli-reference/cli-hooks-reference)."""
    from gitckpt.hooks import install

    service.init(ws.root, "copilot task")
    base = {"sessionId": "cp-1", "timestamp": "2026-12-01T00:00:00Z", "cwd": str(ws.root)}
    out = json.loads(hook("session-start", {**base, "hook_event_name": "SessionStart",
                                            "source": "startup"}, host="copilot").stdout)
    # top-level: Copilot hands the model that one, and drops hookSpecificOutput's
    assert "copilot task" in out["additionalContext"]
    (ws.root / "cp.txt").write_text("x\n")
    quiet(hook("post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "bash",
                             "tool_input": {"command": "echo x > cp.txt"},
                             "tool_response": {"resultType": "success"}}, host="copilot"))
    quiet(hook("post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "view",
                             "tool_input": {"path": "cp.txt"}}, host="copilot"))
    [d] = drifts(ws.root)
    assert (d.note.tool["name"], d.note.tool["command"], d.note.tool["session"]) == \
        ("bash", "echo x > cp.txt", "cp-1")
    written = install.write(install.plan(ws.root, "copilot"))
    config = json.loads(written.path.read_text())
    assert written.path.relative_to(install.project_root(ws.root)).as_posix() == \
        ".github/hooks/gitckpt.json"
    assert config["version"] == 1
    assert config["hooks"]["PostToolUse"] == [  # the documented flat list of handlers
        {"type": "command", "bash": "gitckpt hook post-tool --host copilot --cli",
         "timeoutSec": 30}]
    assert not install.plan(ws.root, "copilot").changed
    install.write(install.plan(ws.root, "copilot", remove=True))
    assert json.loads(written.path.read_text()) == {"version": 1}


def test_a_host_that_announces_a_compaction_every_turn_is_told_once_per_stretch(ws):
    """Gemini CLI fires PreCompress with trigger "auto" before every model request, whether
    or not it compresses: that says nothing. The user's /compress ("manual") does: the
    reminder (a systemMessage the user sees) is said once per unsaved stretch, however many
    edits it grows by, and the session after the compaction still gets it."""
    service.init(ws.root, "gemini compaction")
    base = {"session_id": "g-2", "transcript_path": "/tmp/x", "cwd": str(ws.root),
            "timestamp": "2026-12-01T00:00:00Z", "hook_event_name": "PreCompress",
            "trigger": "manual"}
    (ws.root / "unsaved.txt").write_text("x\n")
    for _ in range(2):
        assert json.loads(hook("pre-compact", {**base, "trigger": "auto"},
                               host="gemini").stdout) == {}
    first = json.loads(hook("pre-compact", base, host="gemini").stdout)
    assert "ckpt_save" in first["systemMessage"]
    assert json.loads(hook("pre-compact", base, host="gemini").stdout) == {}
    (ws.root / "more.txt").write_text("x\n")  # the same stretch, grown: not again
    assert json.loads(hook("pre-compact", base, host="gemini").stdout) == {}
    out = json.loads(hook("session-start", {**base, "hook_event_name": "SessionStart",
                                            "source": "compact"}, host="gemini").stdout)
    assert out["hookSpecificOutput"]["additionalContext"].startswith("gitckpt: 2 files")
