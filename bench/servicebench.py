"""The user's service and its thin clients: a hook, a served command and `gitckpt mcp` against
git and a bare Python start, in one interleaved run; the first hook when no service runs
against the same hook alone; the memory of the bridge and of a service holding MCP sessions.

Usage: python bench/servicebench.py [--files 10000] [--small 1000] [--repeat 11]

Each row runs its two commands in turn (A B A B ...), as a host or a person starts them (a
whole process, JSON on stdin for a hook), and prints the medians of wall and CPU time (user +
system of the process and its children) and the median of the pairwise ratios.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench import ENV, make_workspace

PY = sys.executable
#: The console script a host runs (`gitckpt hook ...`), beside this Python.
GITCKPT = [str(Path(PY).parent / "gitckpt")]


def timed(cmd: list[str], cwd: Path, env: dict, stdin: str = "") -> tuple[float, float]:
    """(wall ms, CPU ms) of one whole process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    p = subprocess.run(cmd, cwd=cwd, input=stdin, capture_output=True, text=True, env=env)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit(f"{cmd} failed: {p.stderr}")
    cpu = (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000
    return wall, cpu


def pair(name: str, a: tuple, b: tuple, repeat: int, before_a=None) -> dict:
    """A and B in turn; each is (cmd, cwd, env, stdin)."""
    wa, ca, wb, cb, ratio = [], [], [], [], []
    for _ in range(repeat):
        if before_a is not None:
            before_a()
        w1, c1 = timed(*a)
        w2, c2 = timed(*b)
        wa.append(w1)
        ca.append(c1)
        wb.append(w2)
        cb.append(c2)
        ratio.append(w1 / w2)
    row = {"row": name, "a_wall": statistics.median(wa), "a_cpu": statistics.median(ca),
           "b_wall": statistics.median(wb), "b_cpu": statistics.median(cb),
           "ratio": statistics.median(ratio)}
    print(f"{name:58} A {row['a_wall']:7.1f} ms ({row['a_cpu']:6.1f} cpu)  "
          f"B {row['b_wall']:7.1f} ms ({row['b_cpu']:6.1f} cpu)  A/B {row['ratio']:.2f}",
          flush=True)
    return row


def rss_mib(pid: int) -> float:
    """The resident memory of a process now (VmRSS), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def service_pid(env: dict) -> int | None:
    code = "from gitckpt.service.client import running_pid; print(running_pid() or '')"
    out = subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True).stdout
    return int(out) if out.strip() else None


def wait_for_service(env: dict, cwd: Path) -> int:
    subprocess.run([*GITCKPT, "service", "status"], cwd=cwd, env=env, capture_output=True)
    subprocess.run([*GITCKPT, "resume"], cwd=cwd, env=env, capture_output=True)  # starts it
    for _ in range(600):
        pid = service_pid(env)
        if pid is not None and subprocess.run([*GITCKPT, "service", "status"], cwd=cwd,
                                              env=env, capture_output=True).returncode == 0:
            return pid
        time.sleep(0.05)
    raise SystemExit("the service did not start")


def stop_service(env: dict, cwd: Path) -> None:
    subprocess.run([*GITCKPT, "service", "stop"], cwd=cwd, env=env, capture_output=True)


def mcp_session(env: dict, cwd: Path) -> subprocess.Popen:
    """A `gitckpt mcp` that has answered a resume."""
    p = subprocess.Popen([*GITCKPT, "mcp"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert p.stdin is not None
    assert p.stdout is not None
    for msg in ({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                 "params": {"name": "ckpt_resume", "arguments": {}}}):
        p.stdin.write((json.dumps(msg) + "\n").encode())
        p.stdin.flush()
    p.stdout.readline()
    p.stdout.readline()
    return p


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10000)
    ap.add_argument("--small", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=11)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="svcbench-"))
    runtime = tempfile.mkdtemp(prefix="sb", dir="/tmp")
    # as an install runs: bytecode cached (compileall below), not compiled at every start
    base = {k: v for k, v in ENV.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([PY, "-m", "compileall", "-q", str(Path(__file__).resolve().parents[1]
                                                      / "gitckpt")], check=True)
    env = {**base, "HOME": str(tmp / "home"), "XDG_STATE_HOME": str(tmp / "state"),
           "GITCKPT_RUNTIME_DIR": runtime, "GITCKPT_SERVICE_IDLE": "3600"}
    alone = {**env, "GITCKPT_SERVICE": "off"}
    (tmp / "home").mkdir()
    big, small = tmp / "big", tmp / "small"
    rows = []
    try:
        make_workspace(big, args.files)
        make_workspace(small, args.small)
        for root in (big, small):
            subprocess.run([*GITCKPT, "init", "bench"], cwd=root, env=alone, check=True,
                           capture_output=True)
            subprocess.run([*GITCKPT, "save", "first"], cwd=root, env=alone, check=True,
                           capture_output=True)
        n = args.repeat
        status = (["git", "status", "--porcelain"], big, env, "")
        bare = ([PY, "-c", "pass"], big, env, "")

        def hook(kind: str, root: Path, e: dict, **fields: object) -> tuple:
            payload = {"session_id": "bench", "cwd": str(root), **fields}
            return ([*GITCKPT, "hook", kind], root, e, json.dumps(payload))

        post = hook("post-tool", big, env, hook_event_name="PostToolUse", tool_name="Bash",
                    tool_input={"command": "make"})
        start = hook("session-start", big, env, hook_event_name="SessionStart",
                     source="resume")
        prompt = hook("prompt", big, env, hook_event_name="UserPromptSubmit",
                      prompt="go on")
        # the first hook of a session when no service runs: it starts one, and works alone
        rows.append(pair(f"first post-tool, no service running / alone ({args.files})",
                         post, hook("post-tool", big, alone, hook_event_name="PostToolUse",
                                    tool_name="Bash", tool_input={"command": "make"}),
                         max(3, n // 2), before_a=lambda: stop_service(env, big)))
        wait_for_service(env, big)
        subprocess.run(post[0], cwd=big, env=env, input=post[3], capture_output=True,
                       text=True)
        time.sleep(1)  # its watcher's first scan is done
        rows.append(pair(f"post-tool, nothing changed / git status ({args.files})",
                         post, status, n))
        edited = big / "d000" / "s00" / "f000000.txt"

        def edit() -> None:
            edited.write_text(edited.read_text() + "x\n")
            time.sleep(0.15)  # as a tool's write and its hook are apart

        rows.append(pair(f"post-tool, one file changed / git status ({args.files})",
                         post, status, n, before_a=edit))
        rows.append(pair(f"session-start / git status ({args.files})", start, status, n))
        rows.append(pair(f"prompt / git status ({args.files})", prompt, status, n))
        nothing = hook("post-tool", tmp / "home", env, hook_event_name="PostToolUse",
                       tool_name="Bash", tool_input={"command": "ls"})
        rows.append(pair("a hook with nothing to do / python -c pass", nothing, bare, n))
        resume = ([*GITCKPT, "resume"], small, env, "")
        save = ([*GITCKPT, "save", "again"], small, env, "")
        bare_small = ([PY, "-c", "pass"], small, env, "")
        subprocess.run(resume[0], cwd=small, env=env, capture_output=True)
        rows.append(pair(f"resume, served / python -c pass ({args.small})", resume,
                         bare_small, n))
        rows.append(pair(f"no-change save, served / python -c pass ({args.small})", save,
                         bare_small, n))
        pygit2 = ([PY, "-c", "import pygit2"], small, env, "")
        rows.append(pair(f"resume alone / import pygit2 ({args.small})",
                         ([*GITCKPT, "resume"], small, alone, ""), pygit2, n))
        rows.append(pair(f"no-change save alone / import pygit2 ({args.small})",
                         ([*GITCKPT, "save", "again"], small, alone, ""), pygit2, n))
        # memory: five MCP sessions on the big workspace, through one service
        pid = service_pid(env)
        sessions = [mcp_session(env, big) for _ in range(5)]
        time.sleep(1)
        assert pid is not None
        service_rss = rss_mib(pid)
        bridge_rss = max(rss_mib(p.pid) for p in sessions)
        print(f"memory: service with 5 MCP sessions on {args.files} files {service_rss:.1f} "
              f"MiB; largest bridge {bridge_rss:.1f} MiB", flush=True)
        for p in sessions:
            assert p.stdin is not None
            p.stdin.close()
            p.wait(30)
        lone = mcp_session(alone, big)
        time.sleep(1)
        print(f"memory: one `gitckpt mcp` alone on {args.files} files "
              f"{rss_mib(lone.pid):.1f} MiB", flush=True)
        assert lone.stdin is not None
        lone.stdin.close()
        lone.wait(30)
        rows.append({"row": "memory", "service_5_sessions_mib": service_rss,
                     "bridge_mib": bridge_rss})
        print(json.dumps(rows))
    finally:
        stop_service(env, big)
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(runtime, ignore_errors=True)


if __name__ == "__main__":
    main()
