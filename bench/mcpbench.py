"""What an agent pays before and during a session over MCP, for gitckpt and the peer
task-checkpoint-mcp in one run: time to answer `initialize`, the always-loaded payload
(instructions + tools/list as sent), and the result texts of a 30-step task.

    python bench/mcpbench.py [--repeat 9]

Medians over `--repeat` server starts. The peer (`pip install -r bench/requirements.txt`) is
measured when its `tc-mcp` command is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}}}


def start(cmd: list[str], cwd: Path) -> subprocess.Popen:
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, cwd=cwd,
                            env={**os.environ, "GITCKPT_WATCH": "off"})


def rpc(proc: subprocess.Popen, msg: dict) -> dict | None:
    proc.stdin.write(json.dumps(msg) + "\n")
    proc.stdin.flush()
    while "id" in msg:
        frame = json.loads(proc.stdout.readline())
        if frame.get("id") == msg["id"]:
            return frame
    return None


def handshake_ms(cmd: list[str], cwd: Path, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        proc = start(cmd, cwd)
        rpc(proc, INIT)
        times.append((time.perf_counter() - t) * 1000)
        proc.kill()
        proc.wait()
    return statistics.median(times)


def session(cmd: list[str], cwd: Path, steps: int = 30) -> dict[str, int]:
    """Payload, and the texts of save, resume and log in a task of `steps` steps."""
    proc = start(cmd, cwd)
    try:
        init = rpc(proc, INIT)
        rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        listed = rpc(proc, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tools = listed["result"]["tools"]
        names = {t["name"] for t in tools}
        prefix = "ckpt_" if "ckpt_save" in names else "tc_"
        payload = len(init["result"].get("instructions") or "") + len(
            json.dumps(tools, separators=(",", ":")))

        def call(n: int, tool: str, args: dict) -> str:
            r = rpc(proc, {"jsonrpc": "2.0", "id": n, "method": "tools/call",
                           "params": {"name": prefix + tool, "arguments": args}})
            return "".join(c.get("text", "") for c in r["result"]["content"])
        root = {"root": str(cwd)} if prefix == "tc_" else {}
        call(3, "init", {"name": "bench task", "goal": "a goal " * 20, **root})
        saves = []
        for i in range(1, steps + 1):
            (cwd / f"m{i}.py").write_text(f"x = {i}\n")
            saves.append(len(call(10 + i, "save", {"title": f"step {i} of the work",
                                                   "conclusion": "c" * 300, "next": "n" * 100,
                                                   **root})))
        (cwd / "README.md").write_text("edited by a shell\n")
        resume = len(call(100, "resume", root))
        log = len(call(101, "log", root)) if prefix + "log" in names else len(
            call(101, "show", root)) if prefix + "show" in names else 0
        return {"payload": payload, "save": int(statistics.median(saves)),
                "resume": resume, "log": log, "tools": len(tools)}
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=9)
    args = ap.parse_args()
    rows = {"gitckpt": [sys.executable, "-m", "gitckpt", "mcp"]}
    peer = shutil.which("tc-mcp")
    if peer:
        rows["task-checkpoint-mcp"] = [peer]
    else:
        print("tc-mcp is not installed: no peer figures (pip install -r bench/requirements.txt)",
              file=sys.stderr)
    out = {}
    for name, cmd in rows.items():
        with tempfile.TemporaryDirectory() as tmp:
            ws = Path(tmp) / "ws"
            ws.mkdir()
            subprocess.run(["git", "init", "-q", str(ws)], check=True)
            full = cmd + (["--root", str(ws)] if name == "gitckpt" else [])
            out[name] = {"initialize": handshake_ms(full, ws, args.repeat),
                         **session(full, ws)}
    print("| server | initialize (median) | tools | instructions + tools/list | save text "
          "(median) | resume text at 30 steps | log text at 30 steps |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, d in out.items():
        print(f"| {name} | {d['initialize']:.0f} ms | {d['tools']} | {d['payload']:,} chars | "
              f"{d['save']} chars | {d['resume']:,} chars | {d['log']:,} chars |")


if __name__ == "__main__":
    main()
