"""A post-tool hook in its own process redacts the shell command it attributes a drift to."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import service

pytestmark = pytest.mark.slow


def test_a_post_tool_drift_still_redacts_its_command(repo):
    service.init(repo, "t")
    (repo / "x.txt").write_text("x\n")
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    payload = {"session_id": "s", "cwd": str(repo), "hook_event_name": "PostToolUse",
               "tool_name": "Bash", "tool_input": {"command": f"curl -H 'token {secret}'"}}
    env = {**os.environ, "GITCKPT_SERVICE": "off"}  # this process, not a running server's
    p = subprocess.run([sys.executable, "-m", "gitckpt", "hook", "post-tool"],
                       input=json.dumps(payload), cwd=repo, capture_output=True, text=True,
                       env=env)
    assert p.returncode == 0, p.stderr
    [d] = [d for d in service.log(repo).drifts if d.note.tool]
    assert secret not in json.dumps(d.note.tool)
    assert "curl" in d.note.tool["command"]


def test_what_a_host_sends_is_bounded_field_by_field(repo):
    """A host's JSON is data from elsewhere: a megabyte command, tool name and session id, and
    a two-megabyte prompt with control characters, are kept within the limits a save has
    (core/limits.py) and cleaned, and the drift and the step are written."""
    from gitckpt.core import limits

    service.init(repo, "t")
    env = {**os.environ, "GITCKPT_SERVICE": "off"}

    def hook(kind: str, **fields) -> None:
        payload = {"session_id": "s" * 1_000_000, "cwd": str(repo), **fields}
        p = subprocess.run([sys.executable, "-m", "gitckpt", "hook", kind],
                           input=json.dumps(payload), cwd=repo, capture_output=True, text=True,
                           env=env)
        assert p.returncode == 0, p.stderr

    hook("prompt", hook_event_name="UserPromptSubmit",
         prompt="\x1b]0;title\x07do " + "p" * 2_000_000)
    (repo / "x.txt").write_text("x\n")
    hook("post-tool", hook_event_name="PostToolUse", tool_name="Bash",
         tool_input={"command": "echo " + "c" * 1_000_000 + "\x1b[2J"})
    [d] = [d for d in service.log(repo).drifts if d.note.tool]
    assert len(d.note.tool["command"]) <= limits.COMMAND
    assert len(d.note.tool["name"]) <= limits.TITLE
    assert len(d.note.tool.get("session") or "") <= limits.TITLE
    assert "\x1b" not in json.dumps(d.note.tool, ensure_ascii=False)
    step = service.save(repo, "after")
    note = service.open_timeline(repo).head(step.task).note
    limits.check_written(note)  # as a note from elsewhere would be checked
    [prompt] = note.prompts
    assert len(prompt["text"]) <= limits.PROMPT
    assert "\x1b" not in prompt["text"]
