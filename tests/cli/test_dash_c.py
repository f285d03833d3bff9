"""`gitckpt -C DIR` means "as if started in DIR", as git's `-C` does: every path a command
takes is read from DIR, whatever folder the command was started in. Each command that takes a
path is run here, in this process, from another folder."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import make_plain, make_repo, service

from gitckpt.cli.main import main
from gitckpt.core.operations import OPERATIONS
from gitckpt.core.request import params

#: These tests read each answer's whole object (structured content).
pytestmark = pytest.mark.usefixtures("full_mcp_results")


def gitckpt(capsys, *argv: str) -> dict:
    """The CLI's `--json` answer to `argv`, run in this process."""
    with pytest.raises(SystemExit) as e:
        main(["--json", *argv])
    out = capsys.readouterr()
    assert e.value.code in (0, None), (argv, out.err)
    return json.loads(out.out)


@pytest.fixture
def setup(tmp_path, monkeypatch, hermetic):
    """A task in a repository with a subfolder `sub`; the commands start in another folder."""
    repo = make_repo(tmp_path / "repo")
    (repo / "sub").mkdir()
    (repo / "sub" / "f.txt").write_text("one\n")
    service.init(repo, "dash c")
    (repo / "sub" / "f.txt").write_text("two\n")
    service.save(repo, "two")
    (repo / "sub" / "f.txt").write_text("three\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "f.txt").write_text("a decoy of the same name\n")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("GITCKPT_SERVICE", "off")
    monkeypatch.setenv("GITCKPT_WATCH", "off")
    return repo, repo / "sub"


def test_every_declared_path_input_is_checked_here():
    """The commands below cover every input declared as a path (a new one must be added)."""
    declared = {(cls.op, p.name) for cls in OPERATIONS.values() for p in params(cls)
                if p.spec.path is not None and p.spec.cli is not None}
    assert declared == {("init", "store"), ("diff", "paths"), ("why", "path"),
                        ("blame", "path"), ("report", "output"), ("restore", "paths"),
                        ("revert", "paths"), ("scope", "paths"), ("export", "to"),
                        ("import", "package")}


def test_workspace_paths_are_read_from_dir(setup, capsys):
    _, sub = setup
    c = ["-C", str(sub)]
    files = gitckpt(capsys, *c, "diff", "1", "--", "f.txt")["files"]
    assert [f["path"] for f in files] == ["sub/f.txt"]
    assert gitckpt(capsys, *c, "restore", "1", "--", "f.txt")["paths"] == ["sub/f.txt"]
    assert gitckpt(capsys, *c, "restore", "1", "f.txt")["paths"] == ["sub/f.txt"]
    assert gitckpt(capsys, *c, "revert", "1", "--", "f.txt")["paths"] == ["sub/f.txt"]
    assert [d["path"] for d in gitckpt(capsys, *c, "scope", "f.txt")["paths"]] == \
        ["sub/f.txt"]
    assert gitckpt(capsys, *c, "why", "f.txt:1")["path"] == "sub/f.txt"
    assert gitckpt(capsys, *c, "blame", "f.txt")["path"] == "sub/f.txt"


def test_file_paths_are_read_from_dir(setup, capsys, tmp_path):
    _, sub = setup
    c = ["-C", str(sub)]
    written = gitckpt(capsys, *c, "report", "-o", "report.md")
    assert written["path"] == str(sub / "report.md")
    assert (sub / "report.md").is_file()
    exported = gitckpt(capsys, *c, "export", "--to", "pkg")
    assert Path(exported["path"]).resolve() == (sub / "pkg").resolve()
    other = make_repo(tmp_path / "other")
    imported = gitckpt(capsys, "-C", str(other), "import", os.path.relpath(sub / "pkg", other))
    assert imported["source_task"] == exported["task"]
    plain = make_plain(tmp_path / "plain")
    gitckpt(capsys, "-C", str(plain), "init", "stored", "--store", "kept")
    assert (plain / "kept" / "HEAD").is_file()


def test_the_local_commands_read_paths_from_dir_too(setup, capsys):
    repo, sub = setup
    with pytest.raises(SystemExit) as e:
        main(["-C", str(sub), "skill", "install", "skills"])
    assert e.value.code in (0, None)
    assert (sub / "skills" / "SKILL.md").is_file()
    message = sub / "MSG"
    message.write_text("a commit\n")
    with pytest.raises(SystemExit) as e:
        main(["-C", str(repo), "hook", "commit-msg", "sub/MSG"])
    assert e.value.code in (0, None)
    assert "Checkpoint: " in message.read_text()


def test_the_mcp_server_serves_dir(setup):
    """`gitckpt -C DIR mcp` serves DIR when nothing else names a root (it served the folder
    it was started in)."""
    import subprocess
    import sys

    repo, _ = setup
    proc = subprocess.Popen([sys.executable, "-m", "gitckpt", "-C", str(repo), "mcp"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        for msg in ({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                        "protocolVersion": "2025-06-18", "capabilities": {},
                        "clientInfo": {"name": "test", "version": "1"}}},
                    {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                     "params": {"name": "ckpt_log", "arguments": {}}}):
            proc.stdin.write(json.dumps(msg) + "\n")
            proc.stdin.flush()
            if "id" in msg:
                answer = json.loads(proc.stdout.readline())
        assert answer["result"]["structuredContent"]["name"] == "dash c", answer
    finally:
        proc.stdin.close()
        proc.wait(30)
