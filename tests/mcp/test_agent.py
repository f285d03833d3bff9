"""The agent's face over MCP: a 30-step session over real stdio with a SIGKILL, the result
budgets, hints in tool-call terms, output schemas that declare every field, log paging, expect,
and a client of the newest protocol."""

from __future__ import annotations

import copy
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import jsonschema
import pytest
from conftest import run_cli
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from gitckpt.mcp.server import build_server

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("full_mcp_results")]

# What an MCP text must never say: a CLI command line (the agent cannot run it as a tool).
CLI_WORDS = re.compile(r"\bgitckpt (init|save|resume|log|tasks|restore|diff|capture|switch|"
                       r"export|import|compress)\b|--json|--apply|--expect|--yes|--task\b")


def params(root: Path, **env) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "gitckpt", "mcp", "--root", str(root)],
                                 env={**os.environ, "GITCKPT_WATCH": "off", **env})


def session(server_or_params, body, mode: str = "legacy"):
    async def main():
        async with Client(server_or_params, mode=mode) as client:
            return await body(client)
    return anyio.run(main)


def text(r) -> str:
    return "\n".join(c.text for c in r.content if getattr(c, "text", None) is not None)


def start_raw(root: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "gitckpt", "mcp", "--root", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "GITCKPT_WATCH": "off"})
    rpc(proc, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}})
    rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return proc


def rpc(proc, msg: dict) -> dict | None:
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()
    while "id" in msg:
        frame = json.loads(proc.stdout.readline())
        if frame.get("id") == msg["id"]:
            return frame
    return None


def test_a_thirty_step_session_with_shell_edits_a_crash_and_a_restore(ws):
    """The issue's session: init with a plan, 30 saves, shell edits, SIGKILL, a fresh server's
    resume, a restore preview, its apply and its undo. Every text is within its budget and
    speaks in tool calls."""
    read: list[str] = []  # every text the agent read

    def seen(r) -> str:
        t = text(r)
        read.append(t)
        return t

    async def first(c):
        r = await c.call_tool("ckpt_init", {"name": "parser", "goal": "ship the parser",
                                            "plan": [{"item": f"part {i}"} for i in range(6)]})
        assert "Started task" in seen(r)
        for i in range(1, 21):
            (ws.root / "src" / f"m{i}.py").write_text(f"x = {i}\n")
            if i % 5 == 0:
                subprocess.run(["sh", "-c", f"echo {i} >> notes.txt"], cwd=ws.root, check=True)
            plan = [{"item": f"part {i}", "status": "done"}] if i < 6 else []
            r = await c.call_tool("ckpt_save", {"title": f"step {i}", "conclusion": "c" * 300,
                                                "next": f"write module {i + 1}", "plan": plan})
            assert not r.is_error, text(r)
            assert len(seen(r)) <= 300, text(r)
            assert r.structured_content["step"] == i
    session(params(ws.root), first)

    proc = start_raw(ws.root)  # a second server, killed with unsaved work
    try:
        for i in range(21, 30):
            (ws.root / "src" / f"m{i}.py").write_text(f"x = {i}\n")
            r = rpc(proc, {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                "name": "ckpt_save", "arguments": {"title": f"step {i}",
                                                   "next": f"write module {i + 1}"}}})
            assert r["result"]["structuredContent"]["step"] == i
            read.append(r["result"]["content"][0]["text"])
        subprocess.run(["sh", "-c", "echo edited >> src/m3.py && rm src/m2.py && "
                        "echo by hand > hand.txt && mkdir -p tests/fixtures && "
                        "for i in $(seq 1 12); do echo $i > tests/fixtures/f$i.json; done"],
                       cwd=ws.root, check=True)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    async def after(c):
        out = {}
        r = await c.call_tool("ckpt_resume", {})
        out["resume"] = (seen(r), r.structured_content)
        r = await c.call_tool("ckpt_save", {"title": "step 30", "conclusion": "all parts in"})
        seen(r)
        r = await c.call_tool("ckpt_log", {})
        out["log"] = (seen(r), r.structured_content)
        r = await c.call_tool("ckpt_log", {"before": 21, "limit": 5})
        out["page"] = (seen(r), r.structured_content)
        r = await c.call_tool("ckpt_log", {"step": "12"})  # a step number as a string
        out["step"] = (seen(r), r.structured_content)
        r = await c.call_tool("ckpt_restore", {"target": 29})  # and as an integer
        preview = seen(r)
        call = re.search(r'ckpt_restore\(target="(\w+)", apply=true, expect="(\w+)"\)$', preview)
        assert call, preview
        r = await c.call_tool("ckpt_restore", {"target": call[1], "apply": True,
                                               "expect": call[2]})
        done = seen(r)
        out["after_apply"] = sorted(p.name for p in (ws.root / "tests").rglob("*.json"))
        undo = re.search(r'ckpt_restore\(target="(\w+)", task="([\w-]+)", apply=true, '
                         r'confirm=true\) undoes it', done)
        assert undo, done
        r = await c.call_tool("ckpt_restore", {"target": undo[1], "task": undo[2],
                                               "apply": True, "confirm": True})
        seen(r)
        return out
    out = session(params(ws.root), after)

    text_, resume = out["resume"]
    assert resume["found"] is True
    assert resume["step"] == 29
    assert resume["unsaved"] == {
        "added": ["hand.txt", *sorted(f"tests/fixtures/f{i}.json" for i in range(1, 13))],
        "modified": ["src/m3.py"], "deleted": ["src/m2.py"]}
    assert len(text_) <= 2000, len(text_)
    lines = text_.splitlines()
    where = {k: next(n for n, line in enumerate(lines) if k in line)
             for k in ("M src/m3.py", "D src/m2.py", "A hand.txt", "tests/fixtures/: 12 added")}
    assert max(where["M src/m3.py"], where["D src/m2.py"]) < where["A hand.txt"]
    assert where["A hand.txt"] < where["tests/fixtures/: 12 added"]  # hand-made first

    log_text, log = out["log"]
    assert [s["step"] for s in log["steps"]] == list(range(21, 31))
    assert log["more"] == 21
    assert len(log_text.splitlines()) == 12
    assert "ckpt_log(before=21)" in log_text
    _page_text, page = out["page"]
    assert [s["step"] for s in page["steps"]] == list(range(16, 21))
    assert page["more"] == 16
    step_text, step = out["step"]
    assert [s["step"] for s in step["steps"]] == [12]
    assert "Next: write module 13" in step_text
    assert "c" * 300 in step_text.replace("…", "") or "Conclusion: ccc" in step_text

    assert out["after_apply"] == []  # step 29 had no fixtures: the apply removed them
    assert (ws.root / "tests" / "fixtures" / "f12.json").read_text() == "12\n"  # undone
    assert (ws.root / "hand.txt").read_text() == "by hand\n"
    for t in read:
        assert not CLI_WORDS.search(t), t


def test_hints_are_tool_calls_over_mcp_and_commands_on_the_cli(ws):
    async def body(c):
        return await c.call_tool("ckpt_save", {"title": "before any init"})
    r = session(build_server(str(ws.root)), body)
    assert r.is_error
    assert "ckpt_init(name=..., goal=...)" in text(r)
    assert not CLI_WORDS.search(text(r))
    error = r.structured_content
    assert error["error"] == "no_active_task"
    assert error["suggest"][0] == {"op": "init", "args": {"name": None, "goal": None}}
    cli = run_cli("-C", str(ws.root), "save", "before any init")
    assert cli.code == 1
    assert 'gitckpt init "NAME" --goal "..."' in cli.err
    as_json = json.loads(run_cli("-C", str(ws.root), "--json", "save", "x").out)
    assert as_json["suggest"] == error["suggest"]  # the same data, spelled by each front end


def test_a_bad_nested_argument_is_one_sentence_with_an_example(ws):
    async def body(c):
        await c.call_tool("ckpt_init", {"name": "t", "plan": [{"item": "a"}]})
        return (await c.call_tool("ckpt_save", {"title": "s", "plan": [
                    {"item": "a", "status": "finished"}]}),
                await c.call_tool("ckpt_log", {"limit": 0}),
                await c.call_tool("ckpt_init", {}))
    bad_status, bad_limit, missing = session(build_server(str(ws.root)), body)
    for r in (bad_status, bad_limit, missing):
        assert r.is_error
        assert "pydantic" not in text(r)
        assert "For example ckpt_" in text(r)
        assert r.structured_content["error"] == "invalid_argument"
    assert "plan.0.status" in text(bad_status)
    assert '"status": "done"' in text(bad_status)
    assert "ckpt_init needs name" in text(missing)


def test_an_apply_whose_plan_changed_is_refused_with_the_new_call(ws):
    async def body(c):
        await c.call_tool("ckpt_init", {"name": "expect"})
        preview = (await c.call_tool("ckpt_restore", {"target": "0"})).structured_content
        (ws.root / "late.txt").write_text("written after the preview\n")
        stale = await c.call_tool("ckpt_restore", {"target": "0", "apply": True,
                                                   "expect": preview["plan_id"]})
        garbage = await c.call_tool("ckpt_restore", {"target": "0", "apply": True,
                                                     "expect": "nonsense"})
        return preview, stale, garbage
    preview, stale, garbage = session(build_server(str(ws.root)), body)
    assert stale.is_error
    assert stale.structured_content["error"] == "plan_changed"
    new = stale.structured_content["plan"]
    assert new["delete"] == ["late.txt"]
    assert new["plan_id"] != preview["plan_id"]
    assert f'expect="{new["plan_id"]}"' in text(stale)
    assert "1 delete" in text(stale)
    assert (ws.root / "late.txt").exists()  # nothing was written
    assert garbage.structured_content["error"] == "invalid_argument"
    assert "git fsck" not in text(garbage)
    assert "plan id" in text(garbage)


def _strict_schema(schema: dict) -> dict:
    """The declared schema with no field beyond the declared ones allowed."""
    s = copy.deepcopy(schema)
    s["additionalProperties"] = False
    return s


def test_every_tool_result_validates_against_its_declared_schema(ws, tmp_path, monkeypatch):
    """Every field a result carries is declared (additional properties refused here), for
    each tool, in its usual and its unusual shapes."""
    monkeypatch.setenv("GITCKPT_MCP_TOOLS", "all")
    calls = [("ckpt_resume", {}), ("ckpt_init", {"name": "schemas", "plan": [{"item": "a"}]}),
             ("ckpt_save", {"title": "one", "verified": ["pytest: ok"]}),
             ("ckpt_save", {"title": "one", "verified": ["pytest: ok"]}),
             ("ckpt_resume", {}), ("ckpt_log", {}), ("ckpt_log", {"step": 1}),
             ("ckpt_log", {"all_tasks": True}), ("ckpt_diff", {"base": "0", "patch": True}),
             ("ckpt_why", {"path": "src/app.py"}), ("ckpt_search", {"query": "one"}),
             ("ckpt_search", {"query": "nothing-like-it"}), ("ckpt_capture", {}),
             ("ckpt_restore", {"target": "0"}),
             ("ckpt_restore", {"target": "0", "apply": True}),
             ("ckpt_revert", {"target": "1"}), ("ckpt_revert", {"target": "1", "apply": True}),
             ("ckpt_export", {"to": str(ws.root.parent / "pkg-schemas")}),
             ("ckpt_init", {"name": "other"}), ("ckpt_switch", {"task": None}),
             ("ckpt_compress", {"dry_run": True}), ("ckpt_compress", {"keep": "0s"}),
             ("ckpt_push", {"remote": "REMOTE", "confirm": True}),
             ("ckpt_fetch", {"remote": "REMOTE"}), ("ckpt_fetch", {"remote": "REMOTE",
                                                                 "task": None})]
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)

    async def body(c):
        tools = {t.name: t for t in (await c.list_tools()).tools}
        checked = set()
        first_task = None
        for name, args in calls:
            if name == "ckpt_switch":
                args = {"task": first_task}
            if args.get("remote") == "REMOTE":
                args = {**args, "remote": remote.as_uri()}
                if "task" in args:
                    args["task"] = first_task
            if name == "ckpt_save" and "verified" in args:
                (ws.root / "file.txt").write_text("x\n")
            r = await c.call_tool(name, args)
            assert not r.is_error, (name, text(r))
            jsonschema.validate(r.structured_content, _strict_schema(tools[name].output_schema))
            if name == "ckpt_init" and first_task is None:
                first_task = r.structured_content["task"]
            checked.add(name)
        r = await c.call_tool("ckpt_import", {"package": str(ws.root.parent / "pkg-schemas"),
                                              "as_id": "imported"})
        assert not r.is_error, text(r)
        jsonschema.validate(r.structured_content, _strict_schema(tools["ckpt_import"]
                                                                 .output_schema))
        checked.add("ckpt_import")
        return checked, tools
    checked, tools = session(build_server(str(ws.root)), body)
    assert checked == set(tools)
    for t in tools.values():
        assert t.output_schema["properties"], t.name  # no empty schema


def test_a_client_of_the_newest_protocol_is_served_by_the_sdk(ws):
    async def body(c):
        r = await c.call_tool("ckpt_resume", {})
        return r
    r = session(params(ws.root), body, mode="auto")
    assert not r.is_error
    assert r.structured_content["found"] is False


def test_skill_md_and_the_server_instructions_say_the_same_rules(ws, monkeypatch):
    from gitckpt.cli.skill import skill_path
    from gitckpt.mcp.handshake import INSTRUCTIONS

    skill = Path(skill_path()).read_text()

    async def body(c):
        return {t.name for t in (await c.list_tools()).tools}
    monkeypatch.setenv("GITCKPT_MCP_TOOLS", "all")
    tools = session(build_server(str(ws.root)), body)
    table = set(re.findall(r"^\| `(ckpt_\w+)`(?: / `(ckpt_\w+)`)?", skill, re.M))
    assert {n for pair in table for n in pair if n} == tools  # every tool, and only those
    for call in re.findall(r"ckpt_\w+\([^)]*\)", INSTRUCTIONS):
        assert call in skill, call  # the rhythm in the same words
    for rule in ("expect", "safety", "found: false", "needs_confirm", "suggest"):
        assert rule in skill, rule
    assert not re.search(r"\w: (true|\")", skill.split("## Example")[1].split("Without MCP")[0])
