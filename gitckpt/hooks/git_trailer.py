"""`gitckpt hook install --git`: an opt-in `prepare-commit-msg` hook of gitckpt's own in the
user's repository, which adds a `Checkpoint: <task> step <n>` trailer naming the active task's
newest step to each commit message; never installed unless asked, and removed whole.

The hook file is written only where none is (or where it is gitckpt's own, by its mark); a
hook of the user's is refused, untouched, with the line to add to it by hand. The hook never
fails a commit: without gitckpt on PATH, a task, or anything else, it adds nothing, exit 0."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from gitckpt.core.errors import InvalidArgument, WorkspaceError
from gitckpt.hooks.install import InstallPlan, project_root

#: The line that marks the hook file as gitckpt's (uninstall removes only such a file).
MARK = "# gitckpt: prepare-commit-msg"
LINE = 'gitckpt hook commit-msg "$1" "$2" || true'
SCRIPT = f"""#!/bin/sh
{MARK} (gitckpt hook install --git; gitckpt hook uninstall --git removes it)
# Adds a "Checkpoint: <task> step <n>" trailer naming the active task's newest step.
command -v gitckpt >/dev/null 2>&1 || exit 0
{LINE}
exit 0
"""
TRAILER = "Checkpoint"


def hook_path(folder: str | Path) -> Path:
    """Where git runs this repository's prepare-commit-msg (core.hooksPath and worktrees
    honoured, as `git rev-parse --git-path` says)."""
    root = project_root(folder)
    p = subprocess.run(["git", "rev-parse", "--git-path", "hooks/prepare-commit-msg"],
                       cwd=root, capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise WorkspaceError(f"{root} is not in a git repository: a commit hook needs one.",
                             "Run it inside the repository whose commits should name steps.")
    return (root / p.stdout.strip()).resolve()


def plan(folder: str | Path, *, remove: bool = False) -> InstallPlan:
    """The hook file's change (`remove`: its removal); nothing is written. A hook file that
    is not gitckpt's, or is a link, is refused."""
    path = hook_path(folder)
    if path.is_symlink():
        raise InvalidArgument(f"{path} is a symbolic link; gitckpt writes only a file of its "
                              "own there.", f"Add this line to the hook yourself: {LINE}")
    old = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
    ours = MARK in old
    if old and not ours:
        if remove:
            return InstallPlan("git", path, old, old, scope="project", name=_name(path))
        raise InvalidArgument(f"{path} is a prepare-commit-msg hook of your own; gitckpt "
                              "does not replace it.",
                              f"Add this line to it, before its end: {LINE}")
    new = "" if remove else SCRIPT
    return InstallPlan("git", path, old, new, scope="project", name=_name(path), mode=0o755)


def _name(path: Path) -> str:
    parts = path.parts
    return "/".join(parts[parts.index(".git"):]) if ".git" in parts else str(path)


def add(message_file: str, source: str, trailer: str | None) -> str:
    """Add the trailer to the commit message file, as `git interpret-trailers` does, unless
    the message has a `Checkpoint:` trailer already; what was done, for the log line."""
    if trailer is None:
        return "no active task; no trailer"
    if source == "merge":
        return "a merge's message; no trailer"
    if not os.path.isfile(message_file):
        return f"{message_file} is not a file; no trailer"
    # a message that names a checkpoint keeps it: a rebase, a cherry-pick or an amend
    # re-uses the message of a commit made at another step
    p = subprocess.run(["git", "interpret-trailers", "--in-place", "--if-exists", "doNothing",
                        "--trailer", f"{TRAILER}: {trailer}", message_file],
                       capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        return f"git interpret-trailers failed: {p.stderr.strip()[:200]}"
    return f"{TRAILER}: {trailer}"
