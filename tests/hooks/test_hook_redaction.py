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
