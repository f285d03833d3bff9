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


CODEX = """# the user's Codex settings
model = "gpt-5.5"

[mcp_servers.db]
command = "pg-mcp"

[projects."/elsewhere"]
trust_level = "trusted"
"""


def test_codex_gets_its_server_as_a_table_of_its_config_toml(tmp_path):
    """`--mcp` for Codex: `[mcp_servers.gitckpt]` added at the end of `.codex/config.toml`,
    every line of the user's kept as written, with the variables that say where the user's
    gitckpt service is (Codex starts servers with a few variables of its own only); the
    hooks then name tool calls. Again: nothing changes; uninstall: the table goes, the rest
    stays byte for byte."""
    import tomllib

    (tmp_path / ".git").mkdir()
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text(CODEX)
    hooks_plan, server_plan = install.plans(tmp_path, "codex", mcp=True)
    assert server_plan.path == config
    assert server_plan.changed
    assert "+[mcp_servers.gitckpt]" in server_plan.diff
    for p in (hooks_plan, server_plan):
        install.write(p)
    text = config.read_text()
    assert text.startswith(CODEX)
    servers = tomllib.loads(text)["mcp_servers"]
    assert servers["db"] == {"command": "pg-mcp"}
    assert servers["gitckpt"]["command"] == "gitckpt"
    assert servers["gitckpt"]["args"] == ["mcp"]
    assert "GITCKPT_RUNTIME_DIR" in servers["gitckpt"]["env_vars"]
    assert "--cli" not in (tmp_path / ".codex" / "hooks.json").read_text()
    assert not any(p.changed for p in install.plans(tmp_path, "codex", mcp=True))
    for p in install.plans(tmp_path, "codex", mcp=True, remove=True):
        install.write(p)
    assert config.read_text() == CODEX


def test_codex_refuses_a_server_of_the_users_named_gitckpt_and_broken_toml(tmp_path):
    (tmp_path / ".git").mkdir()
    config = tmp_path / ".codex" / "config.toml"
    config.parent.mkdir()
    for text, said in (('[mcp_servers.gitckpt]\ncommand = "mine"\n', "not `gitckpt mcp`"),
                       ("model = \n", "not valid TOML"),
                       ('mcp_servers = { db = { command = "pg" } }\n', "cannot add a table")):
        config.write_text(text)
        with pytest.raises(InvalidArgument, match=said):
            install.plans(tmp_path, "codex", mcp=True)
        assert config.read_text() == text


def test_a_codex_server_added_by_codex_mcp_add_is_found(tmp_path, monkeypatch):
    """The server `codex mcp add gitckpt -- gitckpt mcp` wrote into CODEX_HOME's config.toml:
    the hooks name tool calls, not CLI commands."""
    (tmp_path / "p" / ".git").mkdir(parents=True)
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert "--cli" in install.plan(tmp_path / "p", "codex").new
    (home / "config.toml").write_text('[mcp_servers.gitckpt]\ncommand = "gitckpt"\n'
                                      'args = ["mcp"]\n')
    assert "--cli" not in install.plan(tmp_path / "p", "codex").new


def test_opencode_and_copilot_get_their_servers_in_their_project_files(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "opencode.json").write_text('{"model": "x/y"}\n')
    plans = install.plans(tmp_path, "opencode", mcp=True)
    assert [p.path.name for p in plans] == ["gitckpt.js", "opencode.json"]
    for p in plans:
        install.write(p)
    assert json.loads((tmp_path / "opencode.json").read_text()) == {
        "model": "x/y", "mcp": {"gitckpt": {"type": "local", "command": ["gitckpt", "mcp"],
                                            "environment": {"GITCKPT_TOOL_PREFIX": "gitckpt_"}}}}
    assert 'const ARGS = []' in (tmp_path / ".opencode" / "plugins" / "gitckpt.js").read_text()
    plans = install.plans(tmp_path, "copilot", mcp=True)
    assert [p.path.relative_to(tmp_path).as_posix() for p in plans] == [
        ".github/hooks/gitckpt.json", ".mcp.json"]
    for p in plans:
        install.write(p)
    # (Claude Code reads .mcp.json too: the names stay bare, as the instructions say them)
    assert json.loads((tmp_path / ".mcp.json").read_text())["mcpServers"]["gitckpt"] == {
        "command": "gitckpt", "args": ["mcp"]}
    for host in ("opencode", "copilot"):
        for p in install.plans(tmp_path, host, mcp=True, remove=True):
            install.write(p)
    assert json.loads((tmp_path / "opencode.json").read_text()) == {"model": "x/y"}
    assert not (tmp_path / ".mcp.json").exists() or \
        "gitckpt" not in (tmp_path / ".mcp.json").read_text()


def test_doctor_says_when_codex_will_not_run_gitckpts_hooks(tmp_path, monkeypatch):
    """Codex skips hooks it has not trusted, silently, and reads no `.codex/` of a project
    it does not trust: doctor says so, from what Codex records in its config.toml."""
    import subprocess
    import sys

    project = tmp_path / "p"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert install.untrusted_codex(project) == []  # no hooks of gitckpt's: nothing to say
    install.write(install.plan(project, "codex"))
    said = install.untrusted_codex(project)
    assert len(said) == 2
    assert "does not trust the project" in said[0]
    hooks = project.resolve() / ".codex" / "hooks.json"
    (home / "config.toml").write_text(
        f'[projects."{project.resolve()}"]\ntrust_level = "trusted"\n\n'
        f'[hooks.state."{hooks}:Stop:0:0"]\ntrusted_hash = "sha256:00"\n')
    assert install.untrusted_codex(project) == []
    (home / "config.toml").write_text("")
    r = subprocess.run([sys.executable, "-m", "gitckpt", "-C", str(project), "init", "t"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run([sys.executable, "-m", "gitckpt", "-C", str(project), "doctor"],
                       capture_output=True, text=True)
    assert r.returncode == 1
    assert "trusted none of gitckpt's hooks" in r.stdout + r.stderr
