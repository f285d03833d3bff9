"""The fast handshake (gitckpt/mcp/handshake.py): for every protocol version the SDK knows,
each answer it writes before the SDK loads is the SDK's own, and the SDK's second answer is
never seen; its static tool list is the SDK's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import mcp_types.version as versions
import pytest

from gitckpt.mcp import handshake

CLIENT = {"name": "claude-code", "title": "Claude Code", "version": "2.1.328"}


def meta(version: str) -> dict:
    return {"_meta": {"io.modelcontextprotocol/protocolVersion": version,
                      "io.modelcontextprotocol/clientInfo": CLIENT,
                      "io.modelcontextprotocol/clientCapabilities": {"roots": {}}}}


def script(version: str) -> list[dict]:
    """What Claude Code 2.1.328 sends at a session start (seen on its wire), in `version`."""
    if version in versions.HANDSHAKE_PROTOCOL_VERSIONS:
        return [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
                 "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": CLIENT}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                 "params": {"name": "ckpt_resume", "arguments": {}}}]
    m = meta(version)
    return [{"jsonrpc": "2.0", "id": "server-discover-probe-1", "method": "server/discover",
             "params": m},
            {"jsonrpc": "2.0", "id": "listen:0", "method": "subscriptions/listen",
             "params": {**m, "notifications": {"toolsListChanged": True,
                                               "promptsListChanged": True,
                                               "resourcesListChanged": True}}},
            {"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": m},
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": m},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {**m, "name": "ckpt_resume", "arguments": {}}}]


def converse(root, messages: list[dict], fast: str) -> tuple[list[dict], list[dict], float]:
    """Send each message, waiting for its answer; (what came
    back in order, what came after the client closed, seconds until the tool list)."""
    proc = subprocess.Popen([sys.executable, "-m", "gitckpt", "mcp", "--root", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "GITCKPT_WATCH": "off", "GITCKPT_MCP_FAST": fast})
    got: list[dict] = []
    listed = 0.0
    start = time.monotonic()
    try:
        for msg in messages:
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()
            while "id" in msg:
                frame = json.loads(proc.stdout.readline())
                got.append(frame)
                if frame.get("id") == msg["id"]:
                    break
            if msg.get("method") == "tools/list":
                listed = time.monotonic() - start
    finally:
        proc.stdin.close()
        rest = [json.loads(line) for line in proc.stdout.read().splitlines()]
        proc.wait(10)
    return got, rest, listed


def test_the_fast_path_knows_every_protocol_version_the_sdk_knows():
    assert handshake.HANDSHAKE_VERSIONS == versions.HANDSHAKE_PROTOCOL_VERSIONS
    assert handshake.MODERN_VERSIONS == versions.MODERN_PROTOCOL_VERSIONS
    assert (*handshake.HANDSHAKE_VERSIONS, *handshake.MODERN_VERSIONS) \
        == versions.KNOWN_PROTOCOL_VERSIONS


@pytest.mark.parametrize("version", versions.KNOWN_PROTOCOL_VERSIONS)
def test_each_answer_before_the_sdk_loads_is_the_sdks_own(tmp_path, version):
    fast, fast_rest, _ = converse(tmp_path, script(version), "1")
    slow, slow_rest, _ = converse(tmp_path, script(version), "0")
    assert fast == slow  # the handshake, the listen refused, the tool list, the first call
    assert fast_rest == slow_rest  # and no second answer after them
    assert [f["id"] for f in fast if "id" in f] == [m["id"] for m in script(version)
                                                 if "id" in m]


def test_the_static_tool_list_is_the_sdks(tmp_path):
    """tools.json is the SDK's tools/list, byte for byte once parsed. After a change to a
    tool, write it again with: GITCKPT_MCP_FAST=0 and this test's `sdk_tools` (see below)."""
    sdk = sdk_tools(tmp_path)
    shipped = json.loads(handshake.TOOLS.read_text(encoding="utf-8"))
    if os.environ.get("GITCKPT_WRITE_TOOLS") == "1":
        handshake.TOOLS.write_text(json.dumps(sdk, indent=1, ensure_ascii=False) + "\n",
                                   encoding="utf-8")
        shipped = sdk
    assert shipped == sdk, "run GITCKPT_WRITE_TOOLS=1 pytest tests/mcp/test_handshake.py"


def sdk_tools(root) -> list:
    got, _, _ = converse(root, script("2025-11-25")[:3], "0")
    return got[-1]["result"]["tools"]


def test_the_answers_are_written_before_the_sdk_is_imported():
    code = ("import sys; from gitckpt.mcp import handshake as h; w = h.claim(); "
            "held = h.answer(w); "
            "print('mcp' in sys.modules, sorted(map(str, held.answered)), "
            "len(held.lines), file=sys.stderr)")
    for version, said in (("2025-06-18", "False ['0', '1'] 3"),
                          ("2026-07-28", "False ['0', '1', 'listen:0', "
                                         "'server-discover-probe-1'] 4")):
        lines = [json.dumps(m) + "\n" for m in script(version)[:-1]]
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for line in lines:  # one at a time, as a host does: each after the last answer
            proc.stdin.write(line)
            proc.stdin.flush()
            if '"id"' in line:
                json.loads(proc.stdout.readline())
        out, err = proc.communicate(timeout=20)
        assert err.strip() == said
        assert out == ""


def test_a_quiet_client_gets_the_sdk_after_a_moment(tmp_path):
    """A client that says nothing after the handshake: the fast path hands over after
    QUIET seconds, and a message sent later is the SDK's."""
    proc = subprocess.Popen([sys.executable, "-m", "gitckpt", "mcp", "--root", str(tmp_path)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True,
                            env={**os.environ, "GITCKPT_WATCH": "off"})
    try:
        first = script("2025-11-25")
        proc.stdin.write(json.dumps(first[0]) + "\n")
        proc.stdin.flush()
        assert json.loads(proc.stdout.readline())["id"] == 0
        time.sleep(2 * handshake.QUIET)
        for msg in first[1:3]:
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()
        tools = json.loads(proc.stdout.readline())["result"]["tools"]
        assert len(tools) == len(json.loads(handshake.TOOLS.read_text())) == 9
    finally:
        proc.stdin.close()
        assert proc.stdout.read() == ""
        proc.wait(10)


@pytest.mark.parametrize("odd", [
    {"jsonrpc": "2.0", "id": 9, "method": "tools/list", "params": {"cursor": "x"}},
    {"jsonrpc": "2.0", "id": [1], "method": "tools/list"},
    {"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
     "params": {**meta("2026-07-28"), "notifications": {"resourceSubscriptions": ["a://b"]}}},
    {"jsonrpc": "2.0", "id": 9, "method": "server/discover", "params": meta("2099-01-01")},
])
def test_what_the_fast_path_does_not_know_is_the_sdks(tmp_path, odd):
    """A message outside the known shapes is answered (or refused) by the SDK, as without
    the fast path."""
    version = "2026-07-28" if "_meta" in json.dumps(odd) else "2025-11-25"
    lead = script(version)[:1] if odd["method"] != "server/discover" else []
    msgs = [*lead, odd] if isinstance(odd["id"], int) else lead
    fast, fast_rest, _ = converse(tmp_path, msgs, "1")
    slow, slow_rest, _ = converse(tmp_path, msgs, "0")
    assert fast == slow
    assert fast_rest == slow_rest
