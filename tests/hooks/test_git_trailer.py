"""`hook install --git`: an opt-in prepare-commit-msg hook that adds a `Checkpoint: <task>
step <n>` trailer to the user's commits; refused over a hook of the user's, removed whole,
and never the cause of a failed commit."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import git, make_repo, service

from gitckpt.core.errors import InvalidArgument
from gitckpt.hooks import git_trailer

pytestmark = pytest.mark.user_git  # the hook is written into the user's .git, when asked


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gitckpt", *args], cwd=root,
                          capture_output=True, text=True, timeout=60)


def _env() -> dict:  # the venv's gitckpt on PATH, as an installed one is
    return {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
                                  f"{os.environ.get('PATH', '')}"}


def _commit(root: Path, message: str) -> str:
    (root / "c.txt").write_text(message)
    git(root, "add", "c.txt")
    subprocess.run(["git", "commit", "-q", "-m", message], cwd=root, check=True,
                   env=_env(), capture_output=True, timeout=60)
    return git(root, "log", "-1", "--format=%B")


def test_install_commit_amend_and_uninstall(tmp_path):
    root = make_repo(tmp_path / "repo")
    task = service.init(root, "trailer task").save.task
    hook = root / ".git" / "hooks" / "prepare-commit-msg"
    dry = _cli(root, "hook", "install", "--git", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "+++ b/.git/hooks/prepare-commit-msg" in dry.stdout
    assert not hook.exists()
    assert "Checkpoint:" not in _commit(root, "before\n")  # never without being asked
    done = _cli(root, "hook", "install", "--git", "--yes")
    assert done.returncode == 0, done.stderr
    assert os.access(hook, os.X_OK)
    assert f"Checkpoint: {task} step 0" in _commit(root, "first\n")
    (root / "w.txt").write_text("work\n")
    service.save(root, "a step")
    message = _commit(root, "second\n")
    assert message.count("Checkpoint:") == 1
    assert f"Checkpoint: {task} step 1" in message
    (root / "w.txt").write_text("more work\n")
    service.save(root, "another step")
    subprocess.run(["git", "commit", "-q", "--amend", "--no-edit"], cwd=root, check=True,
                   env=_env(), capture_output=True, timeout=60)
    kept = git(root, "log", "-1", "--format=%B")  # the message reused keeps its checkpoint
    assert kept.count("Checkpoint:") == 1
    assert f"Checkpoint: {task} step 1" in kept
    again = _cli(root, "hook", "install", "--git", "--yes")
    assert "already" in again.stdout
    gone = _cli(root, "hook", "uninstall", "--git", "--yes")
    assert gone.returncode == 0, gone.stderr
    assert not hook.exists()
    assert "Checkpoint:" not in _commit(root, "after\n")
    git(root, "fsck", "--no-progress")


def test_a_hook_of_the_users_is_refused_untouched_and_kept_by_uninstall(tmp_path):
    root = make_repo(tmp_path / "repo")
    hook = root / ".git" / "hooks" / "prepare-commit-msg"
    hook.write_text("#!/bin/sh\necho mine\n")
    with pytest.raises(InvalidArgument, match="of your own") as refused:
        git_trailer.plan(root)
    assert git_trailer.LINE in refused.value.hint
    p = _cli(root, "hook", "install", "--git", "--yes")
    assert p.returncode != 0
    assert "Traceback" not in p.stderr
    assert "of your own" in p.stderr
    assert _cli(root, "hook", "uninstall", "--git", "--yes").returncode == 0
    assert hook.read_text() == "#!/bin/sh\necho mine\n"


def test_the_hook_never_fails_a_commit(tmp_path):
    root = make_repo(tmp_path / "repo")  # no task at all
    assert _cli(root, "hook", "install", "--git", "--yes").returncode == 0
    assert "Checkpoint:" not in _commit(root, "no task\n")
    bare = {k: v for k, v in _env().items()}
    bare["PATH"] = "/usr/bin:/bin"  # no gitckpt on PATH
    (root / "d.txt").write_text("d")
    git(root, "add", "d.txt")
    p = subprocess.run(["git", "commit", "-q", "-m", "no gitckpt"], cwd=root, env=bare,
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr


def test_the_options_say_what_goes_together(tmp_path):
    root = make_repo(tmp_path / "repo")
    for args in ((), ("--git", "--host", "claude"), ("--git", "--mcp")):
        p = _cli(root, "hook", "install", *args)
        assert p.returncode == 2, args
        assert "Traceback" not in p.stderr
