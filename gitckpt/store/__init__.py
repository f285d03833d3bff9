"""Stores: where a workspace's checkpoints live, chosen by what the workspace is."""

from __future__ import annotations

import os
from pathlib import Path

from gitckpt.errors import InvalidArgument, StoreCorrupt, WorkspaceError
from gitckpt.snapshot import POINTER
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


def _dir_store(root: Path, store: Path) -> Store:
    from gitckpt.store.dir import DirStore

    store = Path(os.path.abspath(store.expanduser()))
    if store.resolve() == root:  # resolved: a symlink to the workspace is the workspace
        raise InvalidArgument(f"The store cannot be the workspace itself ({root}).",
                              "Use a folder inside it (the default .gitckpt) or elsewhere.")
    return DirStore(root, store)


def _is_store(path: Path) -> bool:
    return (path / "gitckpt" / "format").is_file()


def _marked(root: Path, *, ancestor: bool = False) -> Store | None:
    """The store a `.gitckpt` folder or pointer file at `root` names, if any.

    A marker is never followed through a symlink (a downloaded folder could point it
    anywhere). A parent folder's marker counts only if it is a real store (or pointer) of
    the current user.
    """
    from gitckpt.store.dir import read_pointer

    marker = root / POINTER
    if marker.is_symlink():
        raise WorkspaceError(f"{marker} is a symbolic link; gitckpt does not follow it.",
                             "Remove it, or point GITCKPT_STORE at the store you mean.")
    try:
        st = marker.lstat()
    except OSError:
        return None
    if ancestor and st.st_uid != os.geteuid():
        return None
    if marker.is_dir():
        if ancestor and not _is_store(marker):
            return None
        return _dir_store(root, marker)
    target = read_pointer(marker)
    if not _is_store(target):
        raise StoreCorrupt(f"{marker} names the store {target}, which does not exist.",
                           "Restore that folder, or delete the pointer file to start a new "
                           "store here.")
    return _dir_store(root, target)


def open_store(path: str | Path, *, store: str | None = None) -> Store:
    """The store of the workspace at `path`.

    A `.gitckpt` folder or pointer file at the workspace wins; then the git repository the
    workspace is in; then a `.gitckpt` in a parent folder; then `store` (init --store) or
    GITCKPT_STORE; then a new `.gitckpt` folder in the workspace.
    """
    from gitckpt.store.git import open_git_store  # pygit2 loads only when a store is opened

    root = resolve_root(path)
    if store:
        if open_git_store(root) is not None:
            raise InvalidArgument("--store is for plain folders.",
                                  "In a git repository the checkpoints live in the repository.")
        return _dir_store(root, Path(store))
    found = _marked(root) or open_git_store(root)
    if found is not None:
        return found
    home = Path.home().resolve()
    for parent in root.parents:
        if parent == home or parent == Path(parent.anchor):
            break  # a store in the home folder or at / does not take over everything below
        found = _marked(parent, ancestor=True)
        if found is not None:
            return found
    env = os.environ.get("GITCKPT_STORE")
    return _dir_store(root, Path(env) if env else root / POINTER)
