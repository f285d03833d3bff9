"""Every printed command that undoes or finishes a restore or revert runs as printed, even
when it rewrites more files than GITCKPT_CONFIRM_OVER (it carries --yes / confirm=true) and
when the task is not the active one (it names the task)."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import anyio
from conftest import service
from mcp import Client

from gitckpt.mcp.server import build_server

OVER = "3"  # GITCKPT_CONFIRM_OVER: an apply that rewrites more files than this is confirmed
FILES = 8
ENV = {"GITCKPT_CONFIRM_OVER": OVER}


def files(root: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted((root / "src").glob("f*.txt"))}


def two_states(root: Path) -> tuple[dict, dict]:
    """A task whose step 0 and step 1 differ in FILES files; the files at each."""
    (root / "src").mkdir(exist_ok=True)
    for i in range(FILES):
        (root / "src" / f"f{i}.txt").write_text(f"old {i}\n")
    service.init(root, "undo me")
    old = files(root)
    for i in range(FILES):
        (root / "src" / f"f{i}.txt").write_text(f"new {i}\n")
    service.save(root, "all new")
    return old, files(root)


def killed(root: Path, call: str) -> None:
    """Run `service.<call>` in a child that dies (SIGKILL) after its fourth file write: more
    than OVER files are left to undo, and more than OVER to finish."""
    code = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(Path(__file__).parent.parent)!r})
        from conftest import service
        from gitckpt.engine import workfs
        real, done = workfs.Workdir.write, []
        def dying(self, *a, **k):
            real(self, *a, **k)
            done.append(1)
            if len(done) == 4:
                os.kill(os.getpid(), signal.SIGKILL)
        workfs.Workdir.write = dying
        service.{call}
    """)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env={**os.environ, **ENV})
    assert p.returncode == -9, p.stderr


def run_printed(root: Path, command: str) -> subprocess.CompletedProcess:
    """`command` exactly as printed (`gitckpt` is this checkout's)."""
    words = shlex.split(command)
    assert words[0] == "gitckpt", command
    return subprocess.run([sys.executable, "-m", "gitckpt", *words[1:]], cwd=root,
                          capture_output=True, text=True, env={**os.environ, **ENV})


def printed(text: str) -> tuple[str, str]:
    """(undo, finish) from a problem line of `gitckpt resume`."""
    m = re.search(r"Undo it with `([^`]+)`, or finish it with `([^`]+)`", text)
    assert m, text
    return m[1], m[2]


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gitckpt", "-C", str(root), *args],
                          capture_output=True, text=True, env={**os.environ, **ENV})


def test_an_interrupted_restore_is_undone_and_finished_as_printed(ws):
    old, new = two_states(ws.root)
    killed(ws.root, f'restore({str(ws.root)!r}, "0", apply=True, confirm=True)')
    assert files(ws.root) not in (old, new)  # it died half-way
    undo, finish = printed(cli(ws.root, "resume").stdout)
    doctor = cli(ws.root, "doctor").stdout  # doctor prints the same two commands
    assert f"Undo it: {undo} (or finish it: {finish})" in doctor, doctor
    r = run_printed(ws.root, undo)
    assert r.returncode == 0, r.stderr
    assert undo.endswith(" --apply --yes")
    assert finish.endswith(" --apply --yes")
    assert files(ws.root) == new
    killed(ws.root, f'restore({str(ws.root)!r}, "0", apply=True, confirm=True)')
    undo, finish = printed(cli(ws.root, "resume").stdout)
    r = run_printed(ws.root, finish)
    assert r.returncode == 0, r.stderr
    assert files(ws.root) == old
    assert "interrupted" not in cli(ws.root, "resume").stdout


def test_an_interrupted_revert_of_a_suspended_task_is_finished_and_undone_as_printed(ws):
    old, new = two_states(ws.root)
    killed(ws.root, f'revert({str(ws.root)!r}, "1", apply=True, confirm=True)')
    task = json.loads(cli(ws.root, "--json", "tasks").stdout)["active"]
    service.init(ws.root, "another task")  # the interrupted one is suspended now
    undo, finish = printed(cli(ws.root, "resume", "--task", task).stdout)
    assert f"--task {task}" in undo
    assert f"--task {task}" in finish
    assert finish.startswith("gitckpt revert ")
    r = run_printed(ws.root, finish)
    assert r.returncode == 0, r.stderr
    assert files(ws.root) == old  # step 1's change is undone in all files
    service.restore(ws.root, "1", task=task, apply=True, confirm=True)
    assert files(ws.root) == new  # step 1's change is back, to be reverted again
    killed(ws.root, f'revert({str(ws.root)!r}, "1", task={task!r}, apply=True, '
                    'confirm=True)')
    undo, _ = printed(cli(ws.root, "doctor").stdout.replace("Undo it: ", "Undo it with `")
                      .replace(" (or finish it: ", "`, or finish it with `")
                      .replace(").\n", "`\n"))
    r = run_printed(ws.root, undo)
    assert r.returncode == 0, r.stderr
    assert files(ws.root) == new  # back to what the second revert started from


def test_the_undo_line_after_an_apply_runs_as_printed(ws):
    old, new = two_states(ws.root)
    task = json.loads(cli(ws.root, "--json", "tasks").stdout)["active"]
    service.init(ws.root, "another task")
    done = cli(ws.root, "restore", "0", "--task", task, "--apply", "--yes")
    assert done.returncode == 0, done.stderr
    assert files(ws.root) == old
    undo = re.search(r"^Undo with: (.+)$", done.stdout, re.M)[1]
    assert undo.endswith(f"--task {task} --apply --yes"), undo
    r = run_printed(ws.root, undo)
    assert r.returncode == 0, r.stderr
    assert files(ws.root) == new
    # The handoff names the last restore's undo too (here: of that undo), in the task.
    handoff = cli(ws.root, "resume", "--task", task).stdout
    again = re.search(r"Last restore: .*; undo with `([^`]+)`", handoff)[1]
    assert again.endswith(f"--task {task} --apply --yes"), again
    r = run_printed(ws.root, again)
    assert r.returncode == 0, r.stderr
    assert files(ws.root) == old


def _tool_call(text: str) -> tuple[str, dict]:
    """A tool call as the MCP texts write it, `ckpt_x(a="b", c=true)`, as name and arguments."""
    m = re.fullmatch(r"(ckpt_\w+)\((.*)\)", text)
    assert m, text
    args = dict(kv.split("=", 1) for kv in m[2].split(", "))
    return m[1], {k: json.loads(v) for k, v in args.items()}


def test_the_mcp_texts_undo_calls_run_as_written(ws, monkeypatch):
    monkeypatch.setenv("GITCKPT_CONFIRM_OVER", OVER)
    old, new = two_states(ws.root)
    killed(ws.root, f'restore({str(ws.root)!r}, "0", apply=True, confirm=True)')
    server = build_server(str(ws.root))

    async def body():
        async with Client(server) as c:
            resume = (await c.call_tool("ckpt_resume", {})).content[0].text
            m = re.search(r"Undo it with (ckpt_restore\(.*?\)), or finish it with "
                          r"(ckpt_restore\(.*?\))\.", resume)
            assert m, resume
            undo = _tool_call(m[1])
            assert undo[1]["confirm"] is True
            assert undo[1]["apply"] is True
            r = await c.call_tool(*undo)
            assert not r.is_error, r.content
            assert files(ws.root) == new
            r = await c.call_tool("ckpt_restore", {"target": "0", "apply": True,
                                                   "confirm": True})
            assert not r.is_error
            assert files(ws.root) == old
            text = r.content[0].text
            call = re.search(r"Safety copy \w+: (ckpt_restore\(.*?\)) undoes it", text)[1]
            r = await c.call_tool(*_tool_call(call))
            assert not r.is_error, r.content
            assert files(ws.root) == new
    try:
        anyio.run(body)
    finally:
        server.workspaces.close()
