"""Agent hosts' hooks: how long `gitckpt hook post-tool` and `session-start` take on a synthetic
workspace, in their own process and handed to a running `gitckpt mcp` (the plugin's server),
against `git status` and a bare Python start; and what progress reporting costs a first save.

Usage: python bench/hookbench.py [--files 10000] [--repeat 15]

Every figure is the median of --repeat runs, in milliseconds, wall clock of the whole hook
process as a host runs it (JSON on stdin). The budgets are issue 19's: post-tool 150 ms at
10,000 files, session-start 300 ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ENV, make_workspace


def run(cmd: list[str], cwd: Path, stdin: str = "", env: dict | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True,
                   env=env or ENV, check=True)
    return (time.perf_counter() - start) * 1000


def median(samples: list[float]) -> float:
    return round(statistics.median(samples), 1)


def hooks(root: Path, files: list[Path], repeat: int, env: dict) -> dict[str, float]:
    post = json.dumps({"session_id": "bench", "cwd": str(root), "hook_event_name": "PostToolUse",
                       "tool_name": "Bash", "tool_input": {"command": "make"}})
    # each start a session of its own: a second start of one session within seconds is the
    # same start heard twice (service/events.py), which skips the handoff's memory write
    start = [json.dumps({"session_id": f"bench-{i}", "cwd": str(root),
                         "hook_event_name": "SessionStart", "source": "resume"})
             for i in range(repeat)]
    changed, same, resume = [], [], []
    for i in range(repeat):
        with open(files[i % len(files)], "a") as f:
            f.write(f"hook {i}\n")
        changed.append(run(["gitckpt", "hook", "post-tool"], root, post, env))
        same.append(run(["gitckpt", "hook", "post-tool"], root, post, env))
        resume.append(run(["gitckpt", "hook", "session-start"], root, start[i], env))
    return {"post-tool, one file changed": median(changed),
            "post-tool, nothing changed": median(same), "session-start": median(resume)}


def relayed(root: Path, files: list[Path], repeat: int) -> dict[str, float]:
    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command="gitckpt", args=["mcp", "--root", str(root)],
                                   env=ENV)

    async def body():
        async with Client(params) as c:
            await c.call_tool("ckpt_resume", {})
            return await anyio.to_thread.run_sync(lambda: hooks(root, files, repeat, ENV))

    return anyio.run(body)


def first_after_start(root: Path, files: list[Path], repeat: int) -> float:
    """The first post-tool hook of a session: a fresh `gitckpt mcp` (handshake only, as a
    host starts it), a file changed a moment later (an event its watcher hears), and the
    hook 2 s after that, when an event-driven first scan would just have begun; median ms."""
    post = json.dumps({"session_id": "bench", "cwd": str(root), "hook_event_name": "PostToolUse",
                       "tool_name": "Bash", "tool_input": {"command": "make"}})
    hello = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "hookbench", "version": "1"}}}) + "\n"
    samples = []
    for i in range(repeat):
        server = subprocess.Popen(["gitckpt", "mcp", "--root", str(root)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
        try:
            server.stdin.write(hello.encode())
            server.stdin.flush()
            server.stdout.readline()
            time.sleep(1.0)
            with open(files[-1 - i % len(files)], "a") as f:
                f.write("edited by hand\n")
            time.sleep(2.0)
            with open(files[i % len(files)], "a") as f:
                f.write("edited by the tool\n")
            samples.append(run(["gitckpt", "hook", "post-tool"], root, post, ENV))
        finally:
            server.terminate()
            server.wait()
    return median(samples)


def progress_cost(base: Path, n: int, rounds: int = 3) -> tuple[float, float]:
    """A first save of `n` files without and with a progress sink listening (in process),
    alternating, each on a fresh copy of the same workspace; medians."""
    import shutil

    from ops import service

    from gitckpt.core import progress

    source = base / "progress-source"
    make_workspace(source, n)
    os.environ["GITCKPT_PROGRESS_AFTER"] = "0"
    out: dict[bool, list[float]] = {False: [], True: []}
    for i in range(rounds):
        for listen in (False, True):
            root = base / f"progress-{i}-{listen}"
            shutil.copytree(source, root, symlinks=True)
            heard: list = []
            start = time.perf_counter()
            with progress.reporting(heard.append if listen else None):
                service.init(root, "progress")
            out[listen].append((time.perf_counter() - start) * 1000)
            assert not listen or heard
            shutil.rmtree(root)
    return round(statistics.median(out[False])), round(statistics.median(out[True]))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="gitckpt-hookbench-") as tmp:
        base = Path(tmp)
        ENV["HOME"] = str(base)  # the relay's folder and the log: inside the bench's folder
        ENV.pop("XDG_RUNTIME_DIR", None)
        ENV.pop("XDG_STATE_HOME", None)
        root = base / "ws"
        files = make_workspace(root, a.files)
        subprocess.run(["gitckpt", "init", "bench"], cwd=root, env=ENV, check=True,
                       capture_output=True)
        cold = hooks(root, files, a.repeat, {**ENV, "GITCKPT_RELAY": "off"})
        warm = relayed(root, files, a.repeat)
        first = first_after_start(root, files, min(a.repeat, 7))
        status = median([run(["git", "status", "--porcelain"], root) for _ in range(a.repeat)])
        python = median([run([sys.executable, "-c", "pass"], root) for _ in range(a.repeat)])
        plain, listened = progress_cost(base, a.files)
    print(f"## hooks at {a.files:,} files, medians of {a.repeat} (ms)\n")
    print("| hook | own process | relayed to `gitckpt mcp` | budget |")
    print("|---|---:|---:|---:|")
    budget = {"post-tool, one file changed": 150, "post-tool, nothing changed": 150,
              "session-start": 300}
    for k in cold:
        print(f"| {k} | {cold[k]:.0f} | {warm[k]:.0f} | {budget[k]} |")
    print(f"\n`git status --porcelain`: {status:.0f} ms; `python -c pass`: {python:.0f} ms; "
          f"relayed post-tool / git status: {warm['post-tool, one file changed'] / status:.2f}")
    print(f"\nfirst post-tool hook of a session (a fresh server, a change by hand 2 s before): "
          f"{first:.0f} ms")
    print(f"\nfirst save of {a.files:,} files: {plain} ms without a progress listener, "
          f"{listened} ms with one ({(listened / plain - 1) * 100:+.1f}%)")


if __name__ == "__main__":
    main()
