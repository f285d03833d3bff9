"""Stores: where a workspace's checkpoints live, chosen by what the workspace is."""

from __future__ import annotations

from pathlib import Path

from gitckpt.errors import NotAGitWorkspace, WorkspaceError
from gitckpt.store.base import Store


def resolve_root(path: str | Path) -> Path:
    """The absolute, resolved workspace directory for `path`, or WorkspaceError."""
    p = Path(path).expanduser()
    try:
        resolved = p.resolve(strict=True)
    except (FileNotFoundError, NotADirectoryError) as e:
        raise WorkspaceError(f"Workspace {p} does not exist.",
                             "Pass an existing folder with -C DIR.") from e
    except OSError as e:
        raise WorkspaceError(f"Cannot open workspace {p}: {e.strerror}.",
                             "Pass a readable folder with -C DIR.") from e
    if not resolved.is_dir():
        raise WorkspaceError(f"Workspace {p} is not a directory.",
                             "Pass the project folder with -C DIR.")
    return resolved


def open_store(path: str | Path) -> Store:
    """The store of the workspace at `path`."""
    from gitckpt.store.git import open_git_store  # pygit2 loads only when a store is opened

    root = resolve_root(path)
    store = open_git_store(root)
    if store is None:
        raise NotAGitWorkspace(
            f"{root} is not inside a git work tree.",
            "Run gitckpt inside a git repository (`git init` creates one).",
        )
    return store
