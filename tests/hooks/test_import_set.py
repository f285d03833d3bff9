"""A hook in its own process starts cold at every tool call: it imports what its event needs and
nothing else (the result objects, the handoff, the plain store, the secret rule table load only
where they are used). Each check can fail: the modules are read from the hook process itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from conftest import service

pytestmark = pytest.mark.slow

#: Loaded by no post-tool hook that finds nothing changed in a git repository.
NOT_FOR_A_DRIFT = ("gitckpt.service.results", "gitckpt.engine.handoff", "gitckpt.engine.search",
                   "gitckpt.service.search", "gitckpt.store.plain.store",
                   "gitckpt.safety.secret_rules", "gitckpt.engine.restore", "click", "mcp",
                   # the watcher's, a save's, and what only a log line, a digest or a crash
                   # needs (each cost a hook's start 3-11 ms)
                   "gitckpt.store.journal", "gitckpt.engine.watch", "gitckpt.engine.step_input",
                   "logging", "concurrent.futures", "hashlib", "traceback", "filelock",
                   "secrets", "datetime", "unicodedata")

#: Dataclasses defined in a drift's modules for other commands: a post-tool hook that finds
#: nothing changed never makes them.
UNMADE_BY_A_DRIFT = ("gitckpt.engine.records.SaveResult", "gitckpt.engine.records.TaskSummary",
                     "gitckpt.service.events.Start", "gitckpt.service.events.Unsaved",
                     "gitckpt.core.values.RestoreMarker", "gitckpt.engine.notes.PlanItem")


def hook_modules(root, kind: str, payload: dict) -> tuple[str, set[str]]:
    """The hook's stdout, and every module its process imported (read at exit)."""
    out, mods, _ = hook_process(root, kind, payload)
    return out, mods


def hook_process(root, kind: str, payload: dict) -> tuple[str, set[str], set[str]]:
    """The hook's stdout, every module its process imported, and the dataclasses it left
    unmade (gitckpt.core.record), read at exit."""
    code = ("import atexit, sys\n"
            "def seen():\n"
            "    record = sys.modules.get('gitckpt.core.record')\n"
            "    left = [c.__module__ + '.' + c.__qualname__ for c in record._DEFERRED] "
            "if record else []\n"
            "    sys.stderr.write('\\nDEFERRED ' + ' '.join(left))\n"
            "    sys.stderr.write('\\nMODULES ' + ' '.join(sys.modules))\n"
            "atexit.register(seen)\n"
            f"sys.argv = ['gitckpt', 'hook', {kind!r}]\n"
            "from gitckpt.entry import main\nmain()\n")
    env = {**os.environ, "GITCKPT_RELAY": "off"}  # this process, not a running server's
    p = subprocess.run([sys.executable, "-c", code], input=json.dumps(payload), cwd=root,
                       capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stderr
    tail = p.stderr.rpartition("\nDEFERRED ")[2]
    left, _, mods = tail.partition("\nMODULES ")
    return p.stdout, set(mods.split()), set(left.split())


def aged(root) -> None:
    """The work tree's files a minute old: none is re-read as just modified (racy)."""
    then = time.time() - 60
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            os.utime(os.path.join(folder, name), (then, then))


def test_a_post_tool_hook_that_finds_nothing_loads_no_result_handoff_or_rules(repo):
    aged(repo)
    service.init(repo, "t")
    service.save(repo, "first")
    payload = {"session_id": "s", "cwd": str(repo), "hook_event_name": "PostToolUse",
               "tool_name": "Bash", "tool_input": {"command": "ls"}}
    _, mods, unmade = hook_process(repo, "post-tool", payload)
    assert "gitckpt.service.events" in mods  # the hook did run here
    assert not mods & set(NOT_FOR_A_DRIFT), sorted(mods & set(NOT_FOR_A_DRIFT))
    # the classes its modules define for other commands are never made (0.5 ms each)
    assert set(UNMADE_BY_A_DRIFT) <= unmade, sorted(set(UNMADE_BY_A_DRIFT) - unmade)


def test_a_post_tool_drift_still_redacts_its_command(repo):
    service.init(repo, "t")
    (repo / "x.txt").write_text("x\n")
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    payload = {"session_id": "s", "cwd": str(repo), "hook_event_name": "PostToolUse",
               "tool_name": "Bash", "tool_input": {"command": f"curl -H 'token {secret}'"}}
    _, mods = hook_modules(repo, "post-tool", payload)
    assert "gitckpt.safety.secret_rules" in mods  # a drift was written: its command redacted
    [d] = [d for d in service.log(repo).drifts if d.note.tool]
    assert secret not in json.dumps(d.note.tool)
    assert "curl" in d.note.tool["command"]


def test_a_session_start_builds_its_handoff_without_the_result_objects(repo):
    service.init(repo, "the task", goal="a goal")
    payload = {"session_id": "s", "cwd": str(repo), "hook_event_name": "SessionStart",
               "source": "startup"}
    out, mods = hook_modules(repo, "session-start", payload)
    assert "a goal" in out  # the handoff, as resume words it
    assert "gitckpt.service.results" not in mods
    assert "gitckpt.engine.handoff" in mods
    assert not mods & {"gitckpt.engine.watch", "hashlib", "logging"}, mods
