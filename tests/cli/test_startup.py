"""A CLI that starts like a tool: `--version` loads no engine, a hook client loads no pygit2,
click or mcp, and a plain folder's resume alone loads no pygit2."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow

HEAVY = ("pygit2", "mcp", "click", "gitckpt.service.api", "gitckpt.cli.main", "filelock",
         "watchdog")


def modules_after(*argv: str) -> tuple[str, set[str]]:
    """What `gitckpt ARGV` prints, and every module it imported (read at exit)."""
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sys.modules)))\n"
            f"sys.argv = ['gitckpt', *{list(argv)!r}]\n"
            "from gitckpt.entry import main\nmain()\n")
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    return p.stdout, set(p.stderr.rpartition("MODULES ")[2].split())


def test_version_imports_no_engine():
    out, mods = modules_after("--version")
    assert out.startswith("gitckpt, version ")
    loaded = {m for m in mods if m.split(".")[0] in {h.split(".")[0] for h in HEAVY}
              and any(m == h or m.startswith(h + ".") for h in HEAVY)}
    assert not loaded, loaded


def test_other_command_lines_go_to_click(tmp_path):
    p = subprocess.run([sys.executable, "-m", "gitckpt", "--version", "extra"],
                       capture_output=True, text=True)
    assert p.returncode == 0
    assert p.stdout.startswith("gitckpt, version")
    p = subprocess.run([sys.executable, "-m", "gitckpt", "--no-such-option"],
                       capture_output=True, text=True)
    assert p.returncode == 2
    assert "No such option" in p.stderr
    p = subprocess.run([sys.executable, "-m", "gitckpt", "save", "--help"],
                       capture_output=True, text=True)
    assert p.returncode == 0
    assert "Usage: gitckpt save" in p.stdout


def test_a_narrow_terminal_gets_clicks_wrapping():
    env = {**os.environ, "COLUMNS": "50"}
    p = subprocess.run([sys.executable, "-m", "gitckpt", "--help"], capture_output=True,
                       text=True, env=env)
    assert p.returncode == 0
    assert max(len(ln) for ln in p.stdout.splitlines()) <= 50


def test_a_plain_folder_resume_loads_no_pygit2(hermetic):
    from conftest import service

    root = hermetic / "plain"
    root.mkdir()
    (root / "notes.md").write_text("# notes\n")
    service.init(root, "no git here")
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write(\n"
            "    '\\nPYGIT2 %s' % ('pygit2' in sys.modules)))\n"
            f"sys.argv = ['gitckpt', '-C', {str(root)!r}, 'resume']\n"
            "from gitckpt.entry import main\nmain()\n")
    env = {**os.environ, "GITCKPT_SERVICE": "off"}  # alone: this process does the work
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    assert "no git here" in p.stdout, p.stderr
    assert p.stderr.rstrip().endswith("PYGIT2 False"), p.stderr


@pytest.mark.service
def test_a_hook_client_served_by_the_service_loads_no_pygit2_click_or_mcp(repo):
    """The service serves the hook (started by an earlier client); the hook's own process
    loads none of the engine's libraries."""
    import json

    from conftest import service

    service.init(repo, "t")
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "hook_event_name": "PostToolUse",
                          "tool_name": "Bash", "tool_input": {"command": "ls"}})
    code = ("import atexit, sys\n"
            "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + ' '.join(sys.modules)))\n"
            "sys.argv = ['gitckpt', 'hook', 'post-tool']\n"
            "from gitckpt.entry import main\nmain()\n")
    subprocess.Popen([sys.executable, "-m", "gitckpt", "service", "run", "--detach"],
                     cwd=repo, start_new_session=True)
    from gitckpt.service import client

    deadline = time.monotonic() + 60
    while not client.listening(client.address()) and time.monotonic() < deadline:
        time.sleep(0.05)
    p = subprocess.run([sys.executable, "-c", code], input=payload, cwd=repo,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert "(served)" in p.stderr, p.stderr  # the service answered it
    mods = set(p.stderr.rpartition("MODULES ")[2].split())
    assert not mods & {"pygit2", "click", "mcp", "watchdog", "gitckpt.engine.timeline"}, \
        sorted(mods & {"pygit2", "click", "mcp", "watchdog", "gitckpt.engine.timeline"})
