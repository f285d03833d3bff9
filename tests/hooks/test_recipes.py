"""The recipes of the hosts added after the first five, each fed its documented input:
GitHub Copilot CLI's stop and compaction (docs.github.com/en/copilot/reference/hooks-reference),
Devin CLI (docs.devin.ai/cli/extensibility/hooks: no folder in its input, DEVIN_PROJECT_DIR
instead) and OpenCode, whose plugin file (opencode.ai/docs/plugins) is run under Node with the
hooks OpenCode calls and the real gitckpt behind it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import service
from test_hooks import drifts, hook, quiet

from gitckpt.engine import prompts
from gitckpt.hooks import install


def test_copilot_stop_and_compaction(ws):
    service.init(ws.root, "copilot task")
    base = {"session_id": "cp-2", "cwd": str(ws.root), "timestamp": "2026-12-02T00:00:00Z"}
    (ws.root / "unsaved.txt").write_text("x\n")
    p = hook("pre-compact", {**base, "hook_event_name": "PreCompact", "trigger": "auto",
                             "custom_instructions": ""}, host="copilot")
    quiet(p)  # a notification only: Copilot reads nothing back
    start = json.loads(hook("session-start", {**base, "hook_event_name": "SessionStart",
                                              "source": "compact"}, host="copilot").stdout)
    assert start["additionalContext"].startswith("gitckpt: 1 file changed since step 0")
    (ws.root / "more.txt").write_text("y\n")
    stop = {**base, "hook_event_name": "Stop", "stop_hook_active": False,
            "stopReason": "end_turn"}
    out = json.loads(hook("stop", stop, host="copilot").stdout)
    assert out["decision"] == "block"  # "forces another agent turn using reason as the prompt"
    assert "gitckpt-ckpt_save(" in out["reason"]  # as Copilot CLI names a server's tools
    (ws.root / "again.txt").write_text("z\n")
    quiet(hook("stop", {**stop, "stop_hook_active": True}, host="copilot"))
    config = install.plan(ws.root, "copilot").new
    assert set(json.loads(config)["hooks"]) == {"SessionStart", "UserPromptSubmit",
                                                "PostToolUse", "PreCompact", "Stop"}


def test_devin_takes_its_project_from_the_environment(ws, tmp_path):
    service.init(ws.root, "devin task")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"DEVIN_PROJECT_DIR": str(ws.root)}
    base = {"session_id": "brave-otter", "prompt_id": "p1"}  # no cwd, as Devin sends it
    out = json.loads(hook("session-start", {**base, "hook_event_name": "SessionStart",
                                            "source": "startup"}, host="devin", cwd=elsewhere,
                          env=env).stdout)
    assert "devin task" in out["hookSpecificOutput"]["additionalContext"]
    (ws.root / "made.txt").write_text("x\n")
    quiet(hook("post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "exec",
                             "tool_use_id": "t1", "tool_input": {"command": "touch made.txt"},
                             "tool_response": {"success": True, "output": "", "error": None}},
               host="devin", cwd=elsewhere, env=env))
    quiet(hook("post-tool", {**base, "hook_event_name": "PostToolUse", "tool_name": "read",
                             "tool_input": {"file_path": "made.txt"}},
               host="devin", cwd=elsewhere, env=env))
    [d] = drifts(ws.root)
    assert (d.note.tool["name"], d.note.tool["command"]) == ("exec", "touch made.txt")
    stop = json.loads(hook("stop", {**base, "hook_event_name": "Stop",
                                    "stop_hook_active": False}, host="devin", cwd=elsewhere,
                           env=env).stdout)
    assert stop["decision"] == "block"
    assert not (elsewhere / ".gitckpt").exists()
    [written] = [install.write(p) for p in install.plans(ws.root, "devin", mcp=True)]
    config = json.loads(written.path.read_text())
    assert written.path.relative_to(install.project_root(ws.root)).as_posix() == \
        ".devin/config.json"
    assert config["hooks"]["PostToolUse"] == [
        {"matcher": "^(exec|edit|write)$",
         "hooks": [{"type": "command", "command": "gitckpt hook post-tool --host devin",
                    "timeout": 30}]}]
    assert config["mcpServers"] == {"gitckpt": {"command": "gitckpt", "args": ["mcp"]}}
    [install.write(p) for p in install.plans(ws.root, "devin", remove=True, mcp=True)]
    assert json.loads(written.path.read_text()) == {}


NODE_DRIVER = r"""
const { Gitckpt } = await import(process.argv[2])
const sent = []
const client = { session: { prompt: async (req) => { sent.push(req) } } }
const hooks = await Gitckpt({ client, directory: process.argv[3], worktree: process.argv[3] })
const system = { system: [] }
await hooks["experimental.chat.system.transform"]({ sessionID: "oc-1", model: {} }, system)
const again = { system: [] }
await hooks["experimental.chat.system.transform"]({ sessionID: "oc-1", model: {} }, again)
await hooks["chat.message"]({ sessionID: "oc-1", agent: "build", messageID: "m1" },
  { message: {}, parts: [{ type: "text", text: "build the thing" },
                         { type: "text", text: "(injected)", synthetic: true }] })
const fs = await import("node:fs")
fs.writeFileSync(process.argv[3] + "/built.txt", "by a shell\n")
await hooks["tool.execute.after"](
  { tool: "bash", sessionID: "oc-1", callID: "c1", args: { command: "make built.txt" } },
  { title: "", output: "", metadata: {} })
await hooks["tool.execute.after"](
  { tool: "read", sessionID: "oc-1", callID: "c2", args: { filePath: "built.txt" } },
  { title: "", output: "", metadata: {} })
const compacting = { context: [] }
await hooks["experimental.session.compacting"]({ sessionID: "oc-1" }, compacting)
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "oc-1" } } })
await hooks.event({ event: { type: "session.idle", properties: { sessionID: "oc-1" } } })
console.log(JSON.stringify({ system: system.system, again: again.system,
                             context: compacting.context, sent }))
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="needs Node.js to run the plugin")
def test_opencode_plugin_under_node_with_the_real_gitckpt(ws, tmp_path):
    service.init(ws.root, "opencode task")
    written = install.write(install.plan(ws.root, "opencode"))
    assert written.path.relative_to(install.project_root(ws.root)).as_posix() == \
        ".opencode/plugins/gitckpt.js"
    assert 'const ARGS = ["--cli"]' in written.path.read_text()  # no gitckpt server there
    module = tmp_path / "gitckpt.mjs"  # Node takes `export` from an .mjs (Bun from either)
    module.write_text(written.path.read_text())
    driver = tmp_path / "driver.mjs"
    driver.write_text(NODE_DRIVER)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    p = subprocess.run(["node", str(driver), str(module), str(ws.root)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout.strip().splitlines()[-1])
    [handoff] = out["system"]
    assert "opencode task" in handoff
    assert out["again"] == [handoff]  # every request of the session has it, from one start
    tools = [(d.note.tool["name"], d.note.tool.get("command")) for d in drifts(ws.root)]
    assert tools == [("bash", "make built.txt")]
    [heard] = prompts.pending(service.open_timeline(ws.root).store,
                              service.open_timeline(ws.root).resolve(None))
    assert (heard["text"], heard["session"]) == ("build the thing", "oc-1")
    assert drifts(ws.root)[0].note.tool["prompt"] == heard["id"]
    [kept] = out["context"]  # the compaction's summary keeps what is not saved as a step
    assert "not saved as a step" in kept
    [sent] = out["sent"]  # one reminder for one unsaved state, however often it idles
    assert sent["path"] == {"id": "oc-1"}
    assert "gitckpt save" in sent["body"]["parts"][0]["text"]  # a command: no server
    install.write(install.plan(ws.root, "opencode", remove=True))
    assert not written.path.exists()


def test_a_plugin_file_that_is_not_gitckpts_is_refused(ws):
    mine = install.project_root(ws.root) / ".opencode" / "plugins" / "gitckpt.js"
    mine.parent.mkdir(parents=True)
    mine.write_text("export const Mine = async () => ({})\n")
    with pytest.raises(install.InvalidArgument, match="not gitckpt's plugin"):
        install.plan(ws.root, "opencode")
    assert mine.read_text() == "export const Mine = async () => ({})\n"
