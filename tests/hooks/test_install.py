"""`hook install` of a host whose config holds comments (Gemini CLI's settings.json, which it
reads after stripping them): gitckpt's hooks go in, and every comment outside the hooks
member, the user's other settings and their own hooks stay as they were."""

from __future__ import annotations

import json

import pytest

from gitckpt.core.errors import InvalidArgument
from gitckpt.hooks import install, jsonc

SETTINGS = """{
  // Gemini CLI settings, commented by hand
  "model": { "name": "gemini-2.5-pro" }, /* the model the team uses */
  "hooks": {
    "AfterTool": [
      { "matcher": "write_file", "hooks": [{ "type": "command", "command": "npx prettier" }] }
    ]
  },
  "ui": { "theme": "GitHub" } // last
}
"""


def test_gitckpts_hooks_go_in_and_the_comments_stay(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gemini").mkdir()
    path = tmp_path / ".gemini" / "settings.json"
    path.write_text(SETTINGS)
    p = install.plan(tmp_path, "gemini")
    assert p.changed
    install.write(p)
    text = path.read_text()
    for comment in ("// Gemini CLI settings, commented by hand", "/* the model the team uses */",
                    "// last"):
        assert comment in text, comment
    config = json.loads(jsonc.blank_comments(text))
    assert config["model"] == {"name": "gemini-2.5-pro"}
    assert config["ui"] == {"theme": "GitHub"}
    commands = [h["command"] for g in config["hooks"]["AfterTool"] for h in g["hooks"]]
    assert commands[0] == "npx prettier"  # the user's own hook, first as before
    assert "gitckpt hook post-tool --host gemini --cli" in commands  # no gitckpt server
    assert set(config["hooks"]) == {"SessionStart", "BeforeAgent", "AfterTool", "PreCompress",
                                    "AfterAgent"}
    again = install.plan(tmp_path, "gemini")
    assert not again.changed  # installed: a second run writes nothing


def test_a_commented_file_without_hooks_gets_them_after_its_last_member(tmp_path):
    (tmp_path / ".gemini").mkdir()
    path = tmp_path / ".gemini" / "settings.json"
    path.write_text('{\n  // nothing yet\n  "general": { "vimMode": true }\n}\n')
    install.write(install.plan(tmp_path, "gemini"))
    text = path.read_text()
    assert "// nothing yet" in text
    config = json.loads(jsonc.blank_comments(text))
    assert config["general"] == {"vimMode": True}
    assert "SessionStart" in config["hooks"]


def test_comments_are_only_read_where_the_host_reads_them(tmp_path):
    """Claude Code's settings.json is plain JSON: a comment there is refused, untouched."""
    (tmp_path / ".claude").mkdir()
    path = tmp_path / ".claude" / "settings.json"
    path.write_text('{\n  // a comment\n  "model": "opus"\n}\n')
    with pytest.raises(InvalidArgument, match="not valid JSON"):
        install.plan(tmp_path, "claude")
    assert path.read_text() == '{\n  // a comment\n  "model": "opus"\n}\n'


def test_strings_that_look_like_comments_are_kept():
    text = '{"url": "https://example.com//x", "glob": "/*.py", "q": "a \\" // b"} // real\n'
    assert json.loads(jsonc.blank_comments(text)) == {
        "url": "https://example.com//x", "glob": "/*.py", "q": 'a " // b'}


def test_scopes_local_and_user_and_an_uninstall_that_keeps_the_users_hooks(tmp_path):
    """local: the host's untracked file beside the shared one (teammates without gitckpt
    get no hook errors); user: the home folder's; uninstall takes out only gitckpt's."""
    from pathlib import Path

    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    local = install.write(install.plan(project, "claude", "local"))
    assert local.path == project / ".claude" / "settings.local.json"
    assert not (project / ".claude" / "settings.json").exists()  # the shared file untouched
    user = install.plan(project, "claude", "user")
    assert user.path == Path.home() / ".claude" / "settings.json"  # (a temporary HOME)
    assert "+++ b/~/.claude/settings.json" in user.diff
    mine = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]},
            "model": "opus"}
    shared = project / ".claude" / "settings.json"
    shared.write_text(json.dumps(mine))
    install.write(install.plan(project, "claude"))
    assert "gitckpt hook stop" in shared.read_text()
    removed = install.write(install.plan(project, "claude", remove=True))
    assert removed.written
    assert json.loads(shared.read_text()) == mine  # exactly the user's again
    assert not install.plan(project, "claude", remove=True).changed
    with pytest.raises(InvalidArgument, match="Cursor has no local hooks file"):
        install.plan(project, "cursor", "local")


def test_uninstall_from_the_command_line_reaches_its_command(tmp_path):
    """`gitckpt hook uninstall` was taken for a host's hook event by the fast entry (and
    answered "unknown hook command"): it is click's, as install is."""
    import subprocess
    import sys

    (tmp_path / ".git").mkdir()
    install.write(install.plan(tmp_path, "claude"))
    p = subprocess.run([sys.executable, "-m", "gitckpt", "-C", str(tmp_path), "hook",
                        "uninstall", "--host", "claude", "--yes"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert "unknown hook command" not in p.stderr
    assert "gitckpt" not in (tmp_path / ".claude" / "settings.json").read_text()
