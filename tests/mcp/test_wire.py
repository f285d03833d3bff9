"""The stdio wire: every line a client sends is answered, even one the SDK's own parser drops
(a JSON string holding half of a UTF-16 surrogate pair), and the server goes on serving."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_cli

#: These tests read each answer's whole object (structured content).
pytestmark = pytest.mark.usefixtures("full_mcp_results")

HALF = "\ud83d"  # the first half of 😀; json.dumps writes it as the JSON text "\ud83d"


def _start(root: Path, fast: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gitckpt", "mcp", "--root", str(root)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL,
                            env={**os.environ, "GITCKPT_WATCH": "off", "GITCKPT_MCP_FAST": fast})


def _send(proc, msg: dict) -> None:
    line = json.dumps(msg)  # ensure_ascii: a lone surrogate goes out as its escape
    assert "\\ud83d" in line or HALF not in str(msg)
    proc.stdin.write(line.encode() + b"\n")
    proc.stdin.flush()


def _answer(proc, msg_id, wait: float = 30) -> dict:
    """The frame answering `msg_id`; fails (instead of hanging) if none comes in `wait`."""
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], wait)
        assert ready, f"no answer to request {msg_id} in {wait} s"
        line = proc.stdout.readline()
        assert line, "the server closed stdout"
        frame = json.loads(line)
        if frame.get("id") == msg_id:
            return frame


def _call(proc, n: int, tool: str, args: dict) -> dict:
    _send(proc, {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                 "params": {"name": tool, "arguments": args}})
    return _answer(proc, n)["result"]


@pytest.mark.parametrize("fast", ["1", "0"])
def test_half_a_character_is_an_error_result_and_the_server_goes_on(ws, fast):
    """fast=1: the handshake is answered before the SDK loads and the first call reaches it
    through the handshake's replay while it loads; fast=0: the SDK answers everything."""
    proc = _start(ws.root, fast)
    try:
        # A client name with half a character is not worth a refusal: the session starts.
        _send(proc, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": f"client {HALF}", "version": "1"}}})
        assert _answer(proc, 1)["result"]["serverInfo"]["name"] == "gitckpt"
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})

        bad = _call(proc, 2, "ckpt_init", {"name": f"half {HALF}"})
        assert bad["isError"] is True
        text = bad["content"][0]["text"]
        assert "The argument name holds half of a character" in text
        assert "\\ud83d" in text
        assert "\nhint: Call ckpt_init again" in text
        assert bad["structuredContent"]["error"] == "invalid_argument"

        assert not _call(proc, 3, "ckpt_init", {"name": "whole"})["isError"]
        # after the SDK has served a call; deep inside a list; the second half alone
        bad = _call(proc, 4, "ckpt_save", {"title": "t", "verified": ["ok", "\ude00 x"]})
        assert bad["isError"]
        assert "verified[1]" in bad["content"][0]["text"]
        assert "\\ude00" in bad["content"][0]["text"]
        # a whole pair, written as two escapes, is text
        ok = _call(proc, 5, "ckpt_save", {"title": "smile \ud83d\ude00"})
        assert not ok.get("isError")
        assert ok["structuredContent"]["step"] == 1
        listed = _call(proc, 6, "ckpt_log", {})
        assert not listed.get("isError")
    finally:
        proc.stdin.close()
        proc.wait(30)
    steps = json.loads(run_cli("-C", str(ws.root), "--json", "log", "--steps").out)["steps"]
    assert [(s["step"], s["title"]) for s in steps] == [(0, "whole"), (1, "smile 😀")]
    tasks = json.loads(run_cli("-C", str(ws.root), "--json", "tasks").out)["tasks"]
    assert len(tasks) == 1  # the refused init made nothing
